-- The retry policy's backoff (Hopper.RetryPolicy, core/retries.py) drawn at a
-- delivery's claim: visible_at is when the message is receivable again, its lease
-- ends retry_delay earlier (visible_at - retry_delay). 0 without a policy, so every
-- existing row keeps its meaning. Not indexed, so claims stay HOT updates.
ALTER TABLE messages ADD COLUMN retry_delay float8 NOT NULL DEFAULT 0;
