-- Live deduplication on standard queues (a hopper extension, see QueueStore.send): the
-- key a message holds while it is in the queue it was sent to. NULL for FIFO messages
-- (their window is kept in fifo_dedup) and for messages sent without a key; set to NULL
-- when a message is dead-lettered or moved, so the key is free again. Claims never
-- write it, so they stay HOT updates.
ALTER TABLE messages ADD COLUMN live_key text;

-- At most one message per (queue, key): concurrent sends of one key create one message.
-- A deleted or purged message leaves the index with its row; an expired one still
-- waiting for the sweeper is deleted by the send that wants its key.
CREATE UNIQUE INDEX messages_live_key ON messages (queue_id, live_key)
    WHERE live_key IS NOT NULL;
