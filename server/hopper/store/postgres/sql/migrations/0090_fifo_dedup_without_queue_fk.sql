-- FIFO sends no longer check their queue row through a foreign key, as messages do not
-- since migration 0070. The check ran per deduplication id taken: a row lock (FOR KEY
-- SHARE) on the queue for every FIFO message sent, and with concurrent sends to one
-- queue a multixact per overlap. DeleteQueue now deletes the queue's deduplication ids
-- itself (delete_queue); a send that read the queue before the delete and commits after
-- it leaves ids under a queue id no queue has (ids are never reused), which no statement
-- reads and the housekeeping round removes (sweep_orphans).
ALTER TABLE fifo_dedup DROP CONSTRAINT fifo_dedup_queue_id_fkey;
