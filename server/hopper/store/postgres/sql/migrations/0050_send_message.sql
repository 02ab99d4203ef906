-- send_message(): enqueue from SQL, inside the caller's transaction, for applications
-- that cannot use hopper.enqueue (other languages, psycopg). The message exists iff
-- the transaction commits; waiting long polls are woken at commit (pg_notify inside a
-- transaction is delivered when it commits, dropped when it rolls back).
--
-- It keeps the rules of a plain SendMessage of a body to a standard queue, as the
-- queue core (core/messages.py) words them, and tests/postgres/test_enqueue.py holds
-- the two to the same edges: a non-empty body of SQS's characters, at most the queue's
-- MaximumMessageSize bytes; DelaySeconds 0..900 (NULL: the queue's); the queue's depth
-- ceiling. FIFO queues, message attributes, group and deduplication ids are refused:
-- use hopper.enqueue (Python) for those. Errors are raised with SQLSTATE 22023 or
-- P0002 and the SQS error name first in the message ("InvalidParameterValue: ...").
-- SET search_path FROM CURRENT: the function runs in the schema it was created in.
CREATE FUNCTION send_message(
    queue_name text,
    message_body text,
    delay_seconds integer DEFAULT NULL,
    account_id text DEFAULT '000000000000'
) RETURNS text
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
DECLARE
    q record;
    now_epoch double precision := extract(epoch FROM statement_timestamp());
    delay double precision;
    size integer := octet_length(message_body);
    message_id text := gen_random_uuid()::text;
BEGIN
    SELECT id, config INTO q FROM queues WHERE account = account_id AND name = queue_name;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'QueueDoesNotExist: The specified queue does not exist.'
            USING ERRCODE = 'P0002';
    END IF;
    IF (q.config ->> 'fifo')::boolean THEN
        RAISE EXCEPTION 'UnsupportedOperation: send_message() sends to standard queues only; use hopper.enqueue for FIFO queues.'
            USING ERRCODE = '22023';
    END IF;
    IF message_body IS NULL OR message_body = '' THEN
        RAISE EXCEPTION 'MissingParameter: The request must contain the parameter MessageBody.'
            USING ERRCODE = '22023';
    END IF;
    -- SQS's characters: #x9 #xA #xD #x20-#xD7FF #xE000-#xFFFD #x10000-#x10FFFF (text
    -- holds no NUL and no surrogates, so what is left to refuse is this).
    IF message_body ~ E'[\\x01-\\x08\\x0B\\x0C\\x0E-\\x1F\\uFFFE\\uFFFF]' THEN
        RAISE EXCEPTION 'InvalidMessageContents: Invalid binary character was found in the message body, the set of allowed characters is #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF'
            USING ERRCODE = '22023';
    END IF;
    IF size > (q.config ->> 'maximum_message_size')::integer THEN
        RAISE EXCEPTION 'InvalidParameterValue: One or more parameters are invalid. Reason: Message must be shorter than % bytes.',
            q.config ->> 'maximum_message_size' USING ERRCODE = '22023';
    END IF;
    delay := coalesce(delay_seconds, (q.config ->> 'delay_seconds')::double precision);
    IF delay < 0 OR delay > 900 THEN
        RAISE EXCEPTION 'InvalidParameterValue: Value % for parameter DelaySeconds is invalid. Reason: DelaySeconds must be >= 0 and <= 900.',
            delay_seconds USING ERRCODE = '22023';
    END IF;
    -- the depth ceiling (Hopper.MaximumQueueDepth), counted only when the queue has one
    IF q.config ->> 'maximum_depth' IS NOT NULL AND (
        SELECT count(*) FROM (
            SELECT 1 FROM messages m
            WHERE m.queue_id = q.id
              AND m.sent_at > now_epoch - (q.config ->> 'message_retention_period')::float8
            LIMIT (q.config ->> 'maximum_depth')::int8
        ) held
    ) >= (q.config ->> 'maximum_depth')::int8 THEN
        RAISE EXCEPTION 'OverLimit: The queue holds its maximum of % messages (Hopper.MaximumQueueDepth).',
            q.config ->> 'maximum_depth' USING ERRCODE = '22023';
    END IF;
    INSERT INTO messages (queue_id, id, body, sent_at, visible_at)
    VALUES (q.id, message_id, message_body, now_epoch, now_epoch + delay);
    PERFORM pg_notify('hopper_wakeup', 'sql ' || account_id || '/' || queue_name);
    RETURN message_id;
END;
$$;
