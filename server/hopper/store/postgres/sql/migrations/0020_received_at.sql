-- When the current delivery of a message was made: ChangeMessageVisibility may extend
-- a lease to at most 12 hours after it (AWS's "total visibility timeout"). Not indexed,
-- so a claim that writes it stays a HOT update. NULL for messages delivered before this
-- migration: they are not held to the limit.
ALTER TABLE messages ADD COLUMN received_at double precision;
