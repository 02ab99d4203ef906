-- hopper's initial schema. Runs with search_path set to the target schema, so
-- nothing here names a schema. Times are epoch seconds (double precision), the unit of
-- the store interface, so a fake clock's values go in and come out unchanged.

-- Fencing tokens: one store-wide sequence, so a redelivery always carries a larger token.
CREATE SEQUENCE fencing_tokens;
-- FIFO sequence numbers: global, hence strictly increasing within every queue.
CREATE SEQUENCE fifo_sequence_numbers;
-- Send order: the tie-break that makes the queue oldest-first.
CREATE SEQUENCE message_order;

CREATE TABLE queues (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account text NOT NULL,
    name text NOT NULL,
    -- The whole QueueConfig; SQL reads only retention, fifo and the dead-letter rule.
    config jsonb NOT NULL,
    tags jsonb NOT NULL DEFAULT '{}',
    created_at double precision NOT NULL,
    last_modified_at double precision NOT NULL,
    last_purged_at double precision,
    UNIQUE (account, name)
);

-- Dead-letter rules by target, for ListDeadLetterSourceQueues and the redrive join.
CREATE INDEX queues_dead_letter_target ON queues (
    (config -> 'dead_letter' ->> 'account'), (config -> 'dead_letter' ->> 'name')
) WHERE config ? 'dead_letter';

-- SQS refuses to re-create a name for 60 seconds after DeleteQueue.
CREATE TABLE deleted_queues (
    account text NOT NULL,
    name text NOT NULL,
    deleted_at double precision NOT NULL,
    PRIMARY KEY (account, name)
);

-- Every queue's messages in one table. A claim rewrites visible_at, receive_count and
-- token; none of them is indexed and fillfactor leaves room on each page, so claims
-- are HOT updates that add no index entries (the trap: indexing visible_at left dead
-- index entries at the head of the queue after every claim). Measured with
-- bench/pg_drain.py: at fillfactor 70 half the claims were HOT, at 50 all of them.
CREATE TABLE messages (
    queue_id bigint NOT NULL REFERENCES queues (id) ON DELETE CASCADE,
    id text NOT NULL,
    seq bigint NOT NULL DEFAULT nextval('message_order'),
    body text NOT NULL,
    -- name -> {"t": data type, "s": string value} or {"t": ..., "b": base64 binary}
    attributes jsonb NOT NULL DEFAULT '{}',
    trace_header text,
    sent_at double precision NOT NULL,
    visible_at double precision NOT NULL,
    receive_count integer NOT NULL DEFAULT 0,
    -- 0 until the first delivery: no receipt names it.
    token bigint NOT NULL DEFAULT 0,
    first_received_at double precision,
    group_id text,
    dedup_id text,
    sequence_number bigint,
    dead_letter_source_account text,
    dead_letter_source_name text,
    PRIMARY KEY (queue_id, id)
) WITH (fillfactor = 50, autovacuum_vacuum_scale_factor = 0.01,
        autovacuum_vacuum_insert_scale_factor = 0.01);

-- "The oldest receivable messages of this queue": scanned in send order, filtering
-- on visible_at (not in the index, so claims stay HOT). The rows skipped are the
-- in-flight and delayed ones at the head, at most the queue's open leases and delays.
-- (queue_id, visible_at, id) was the alternative: it serves "visible now" by range,
-- but orders by deadline rather than by send (a redelivered message would queue behind
-- newer ones, and equal deadlines would fall back to random ids), and every claim
-- would move the message's index entry.
CREATE INDEX messages_queue_order ON messages (queue_id, seq);

-- FIFO group locking: "does this group have a message in flight or ahead of mine".
CREATE INDEX messages_queue_group ON messages (queue_id, group_id, seq)
    WHERE group_id IS NOT NULL;

-- FIFO deduplication: one row per (queue, deduplication id), reused after it expires,
-- outliving the message itself (a duplicate of a deleted message is still a duplicate).
CREATE TABLE fifo_dedup (
    queue_id bigint NOT NULL REFERENCES queues (id) ON DELETE CASCADE,
    dedup_id text NOT NULL,
    message_id text NOT NULL,
    sequence_number bigint NOT NULL,
    expires_at double precision NOT NULL,
    PRIMARY KEY (queue_id, dedup_id)
);

-- Expired deduplication ids of a queue, for the sweep in FIFO receives.
CREATE INDEX fifo_dedup_expiry ON fifo_dedup (queue_id, expires_at);
