-- The Postgres topic store's SQL (store/postgres/topics.py), one named block per
-- statement, loaded as queries.sql is. ARNs compare and sort in the "C" collation: by
-- code point, as the in-memory store sorts them, whatever the database's collation.

-- name: create_topic
-- Create the topic unless one of its ARN exists; the stored row and whether it is new.
-- $1 arn, $2 attributes, $3 tags.
WITH created AS (
    INSERT INTO sns_topics (arn, attributes, tags) VALUES ($1, $2, $3)
    ON CONFLICT (arn) DO NOTHING
    RETURNING arn, attributes, tags
)
SELECT arn, attributes, tags, true AS created FROM created
UNION ALL
SELECT arn, attributes, tags, false FROM sns_topics
WHERE arn = $1 AND NOT EXISTS (SELECT 1 FROM created);

-- name: get_topic
-- $1 arn.
SELECT arn, attributes, tags FROM sns_topics WHERE arn = $1;

-- name: list_topics
-- Topics whose ARN starts with $1, after $2 (NULL: from the first), at most $3.
SELECT arn, attributes, tags FROM sns_topics
WHERE left(arn, length($1)) = $1 AND ($2::text IS NULL OR arn COLLATE "C" > $2)
ORDER BY arn COLLATE "C" LIMIT $3;

-- name: update_topic
-- $1 arn, $2 attributes, $3 tags; no row when the topic does not exist.
UPDATE sns_topics SET attributes = $2, tags = $3 WHERE arn = $1
RETURNING arn, attributes, tags;

-- name: delete_topic
-- Its subscriptions go with it (ON DELETE CASCADE). $1 arn.
DELETE FROM sns_topics WHERE arn = $1 RETURNING arn;

-- name: subscribe
-- Store the subscription unless its topic has one of that protocol and endpoint; the
-- stored row and whether it is new; no row when the topic does not exist.
-- $1 arn, $2 topic arn, $3 owner, $4 protocol, $5 endpoint, $6 attributes,
-- $7 confirmed, $8 token.
WITH topic AS (
    -- the topic, locked against a concurrent delete until this commits
    SELECT arn FROM sns_topics WHERE arn = $2 FOR KEY SHARE
),
created AS (
    INSERT INTO sns_subscriptions
        (arn, topic_arn, owner, protocol, endpoint, attributes, confirmed, token)
    SELECT $1, topic.arn, $3, $4, $5, $6, $7, $8 FROM topic
    ON CONFLICT (topic_arn, protocol, endpoint) DO NOTHING
    RETURNING *
)
SELECT *, true AS created FROM created
UNION ALL
SELECT s.*, false FROM sns_subscriptions s
WHERE s.topic_arn = $2 AND s.protocol = $4 AND s.endpoint = $5
  AND NOT EXISTS (SELECT 1 FROM created);

-- name: get_subscription
-- $1 arn.
SELECT * FROM sns_subscriptions WHERE arn = $1;

-- name: update_subscription
-- $1 arn, $2 attributes, $3 confirmed; no row when the subscription does not exist.
UPDATE sns_subscriptions SET attributes = $2, confirmed = $3 WHERE arn = $1 RETURNING *;

-- name: unsubscribe
-- $1 arn.
DELETE FROM sns_subscriptions WHERE arn = $1 RETURNING arn;

-- name: list_subscriptions
-- Subscriptions whose ARN starts with $1, after $2 (NULL: from the first), at most $3.
SELECT * FROM sns_subscriptions
WHERE left(arn, length($1)) = $1 AND ($2::text IS NULL OR arn COLLATE "C" > $2)
ORDER BY arn COLLATE "C" LIMIT $3;

-- name: signing_key
-- The stored key, or $1 stored as the key when there is none yet.
WITH stored AS (
    INSERT INTO sns_signing_key (pem) VALUES ($1) ON CONFLICT (only_one) DO NOTHING
    RETURNING pem
)
SELECT pem FROM stored UNION ALL SELECT pem FROM sns_signing_key
WHERE NOT EXISTS (SELECT 1 FROM stored);

-- name: add_posts
-- Keep notifications for HTTP/S subscribers. $1 the posts (jsonb array of objects with
-- id, subscription_arn, topic_arn, url, headers, body, attempts, due_at).
INSERT INTO sns_posts (id, subscription_arn, topic_arn, url, headers, body, attempts, due_at)
SELECT p.id, p.subscription_arn, p.topic_arn, p.url, p.headers, p.body, p.attempts, p.due_at
FROM jsonb_to_recordset($1::jsonb) AS p (id text, subscription_arn text, topic_arn text,
    url text, headers jsonb, body text, attempts integer, due_at float8);

-- name: claim_posts
-- Lease up to $3 posts due by $1 and not leased past it, oldest due first, until $2.
WITH due AS (
    -- what is due, skipping rows another server is claiming right now
    SELECT id FROM sns_posts WHERE due_at <= $1 AND leased_until <= $1
    ORDER BY due_at LIMIT $3 FOR UPDATE SKIP LOCKED
)
UPDATE sns_posts p SET leased_until = $2 FROM due WHERE p.id = due.id
RETURNING p.*;

-- name: finish_post
-- $1 id.
DELETE FROM sns_posts WHERE id = $1;

-- name: retry_post
-- $1 id, $2 attempts made, $3 when it is due again.
UPDATE sns_posts SET attempts = $2, due_at = $3, leased_until = 0 WHERE id = $1;
