-- Message move tasks (StartMessageMoveTask), and the index the retention sweeper uses.

-- One row per task. Queues are named, not referenced: a task outlives a deleted queue
-- (it ends FAILED), as its ListMessageMoveTasks entry does on AWS.
CREATE TABLE move_tasks (
    id text PRIMARY KEY,
    source_account text NOT NULL,
    source_name text NOT NULL,
    destination_account text,
    destination_name text,
    max_per_second integer,
    status text NOT NULL,
    started_at double precision NOT NULL,
    to_move bigint NOT NULL,
    moved bigint NOT NULL DEFAULT 0,
    failure_reason text,
    -- The process running the task renews this; once it has passed, any process may
    -- take the task over (how a task survives a restart).
    lease_until double precision NOT NULL,
    -- Start order among tasks started in the same instant.
    seq bigint GENERATED ALWAYS AS IDENTITY
);

-- SQS's rule, held by the database: one active task per source queue.
CREATE UNIQUE INDEX move_tasks_one_active ON move_tasks (source_account, source_name)
    WHERE status IN ('RUNNING', 'CANCELLING');

-- ListMessageMoveTasks: a source's most recent tasks.
CREATE INDEX move_tasks_by_source ON move_tasks (source_account, source_name, started_at);

-- Orphaned tasks, for the periodic claim.
CREATE INDEX move_tasks_active_lease ON move_tasks (lease_until)
    WHERE status IN ('RUNNING', 'CANCELLING');

-- The retention sweeper: a queue's oldest messages by send time. sent_at never changes,
-- so claims stay HOT updates (they rewrite none of the indexed columns).
CREATE INDEX messages_queue_sent ON messages (queue_id, sent_at);
