-- The receive count a message brought into its queue: a dead-letter move keeps the
-- count (AWS's ApproximateReceiveCount counts receives "across all queues") and
-- records it here, so the new queue's own maxReceiveCount counts only the receives
-- made from that queue. 0 for a sent message and after a move task. Not indexed, so
-- claims stay HOT updates.
ALTER TABLE messages ADD COLUMN carried_receive_count integer NOT NULL DEFAULT 0;
