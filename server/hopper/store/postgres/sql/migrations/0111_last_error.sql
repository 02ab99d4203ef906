-- Why a message's latest dispatch failed (Hopper.LastError): the target's status and
-- the start of its answer, or the connection error, set by the change of visibility
-- that releases it. NULL for a message never dispatched or whose dispatches all
-- succeeded so far. It moves with the row to a dead-letter queue.
ALTER TABLE messages ADD COLUMN last_error text;
