-- The outbox of SNS notifications for HTTP/S subscribers (store/postgres/topics.py):
-- written in a publish's own transaction, claimed by any server with a lease per
-- attempt, deleted once delivered or given up. No foreign key to the subscription: a
-- post outlives an Unsubscribe until its server looks and drops it.
CREATE TABLE sns_posts (
    id                text PRIMARY KEY,
    subscription_arn  text NOT NULL,
    topic_arn         text NOT NULL,
    url               text NOT NULL,
    headers           jsonb NOT NULL,
    body              text NOT NULL,
    attempts          integer NOT NULL DEFAULT 0,
    due_at            float8 NOT NULL,
    leased_until      float8 NOT NULL DEFAULT 0
);

CREATE INDEX sns_posts_due ON sns_posts (due_at);
