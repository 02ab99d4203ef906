-- SNS topics (hopper/sns/, store/postgres/topics.py): topics by ARN with the
-- attributes and tags their clients set, their subscriptions by ARN (one per topic,
-- protocol and endpoint, as SNS keeps one), and the one key every server over this
-- database signs notifications with.
CREATE TABLE sns_topics (
    arn        text PRIMARY KEY,
    attributes jsonb NOT NULL DEFAULT '{}',
    tags       jsonb NOT NULL DEFAULT '{}'
);

CREATE TABLE sns_subscriptions (
    arn        text PRIMARY KEY,
    topic_arn  text NOT NULL REFERENCES sns_topics (arn) ON DELETE CASCADE,
    owner      text NOT NULL,
    protocol   text NOT NULL,
    endpoint   text NOT NULL,
    attributes jsonb NOT NULL DEFAULT '{}',
    confirmed  boolean NOT NULL,
    token      text,
    UNIQUE (topic_arn, protocol, endpoint)
);

CREATE TABLE sns_signing_key (
    only_one boolean PRIMARY KEY DEFAULT true CHECK (only_one),
    pem      bytea NOT NULL
);
