-- FIFO receive attempts (ReceiveRequestAttemptId): the receive an attempt id names, so
-- a retry within 300 seconds gets the same deliveries back (see QueueStore.receive).
-- Per message of that receive, in delivery order: its id, and the token and lease
-- deadline the receive (or its last replay) left it with. A message whose token or
-- deadline has moved on since was changed (deleted, delivered again, its visibility
-- changed), and the attempt is spent.
CREATE TABLE receive_attempts (
    queue_id bigint NOT NULL REFERENCES queues (id) ON DELETE CASCADE,
    attempt_id text NOT NULL,
    made_at double precision NOT NULL,
    message_ids text[] NOT NULL,
    tokens bigint[] NOT NULL,
    deadlines double precision[] NOT NULL,
    PRIMARY KEY (queue_id, attempt_id)
);

-- A queue's attempts past their window, for the sweep when a new one is recorded.
CREATE INDEX receive_attempts_age ON receive_attempts (queue_id, made_at);
