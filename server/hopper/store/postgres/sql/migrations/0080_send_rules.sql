-- send_message() (migration 0050) stated SendMessage's rules a third time, beside the
-- queue core and the stores: its own character set, delay range, depth count, error
-- texts and notification channel, held to the core's only by a test. Now it states
-- none. hopper writes them into `send_rules` at every migration, taken from the code
-- that states them (hopper/enqueue/rules.py: the core's limits and characters, the wire's
-- texts, the store's send statements and channel), and the function reads them: so a
-- database migrated by a hopper keeps that hopper's rules, word for word.
--
-- One row. Each text is "<SQS error name>: <message>"; those with values (marked
-- below) are format() templates of them (%1$s, %2$s), the others are raised as they are.
CREATE TABLE send_rules (
    one boolean PRIMARY KEY DEFAULT true CHECK (one),
    -- the characters SQS refuses in a body (a regular expression)
    forbidden text NOT NULL,
    max_delay float8 NOT NULL,
    deduplication_window float8 NOT NULL,
    -- the store's send statements (queries.sql): send_messages, the insert that also
    -- counts the depth ceiling, as for every send to a queue with one; and
    -- send_plain_messages, as for every send to a queue without
    send_statement text NOT NULL,
    plain_send_statement text NOT NULL,
    -- the wake-up: pg_notify(channel, format(wakeup, account, queue name)), a template
    channel text NOT NULL,
    wakeup text NOT NULL,
    queue_missing text NOT NULL,
    fifo_refused text NOT NULL,
    body_missing text NOT NULL,
    body_forbidden text NOT NULL,
    too_long text NOT NULL,          -- %1$s: the queue's MaximumMessageSize
    delay_invalid text NOT NULL,     -- %1$s: the DelaySeconds given
    queue_full text NOT NULL         -- %1$s: the queue's name, %2$s: its depth ceiling
);

-- send_message(): enqueue from SQL, inside the caller's transaction, for applications
-- that cannot use hopper.enqueue (other languages, psycopg). The message exists iff
-- the transaction commits; waiting long polls are woken at commit (pg_notify inside a
-- transaction is delivered when it commits, dropped when it rolls back).
--
-- Its scope: a plain SendMessage of a body to a standard queue (no attributes, group or
-- deduplication ids; FIFO queues are refused: use hopper.enqueue). It checks, in
-- SendMessage's order, what such a send can break: a body, of SQS's characters, within
-- the queue's MaximumMessageSize in bytes; DelaySeconds (NULL: the queue's); and, by
-- running the store's own send statement, the depth ceiling. Errors are raised with
-- SQLSTATE 22023, or P0002 for a missing queue, and the SQS error name first
-- ("InvalidParameterValue: ..."). SET search_path FROM CURRENT: the function runs in the
-- schema it was created in.
CREATE OR REPLACE FUNCTION send_message(
    queue_name text,
    message_body text,
    delay_seconds integer DEFAULT NULL,
    account_id text DEFAULT '000000000000'
) RETURNS text
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
DECLARE
    r send_rules;
    q record;
    delay double precision;
    message_id text := gen_random_uuid()::text;
    sent record;
    stored bigint;
BEGIN
    SELECT * INTO r FROM send_rules;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'send_message() has no rules yet: run `hopper migrate`, which writes them'
            USING ERRCODE = '55000';
    END IF;
    SELECT id, config INTO q FROM queues WHERE account = account_id AND name = queue_name;
    IF NOT FOUND THEN
        RAISE EXCEPTION '%', r.queue_missing USING ERRCODE = 'P0002';
    END IF;
    IF (q.config ->> 'fifo')::boolean THEN
        RAISE EXCEPTION '%', r.fifo_refused USING ERRCODE = '22023';
    END IF;
    IF message_body IS NULL OR message_body = '' THEN
        RAISE EXCEPTION '%', r.body_missing USING ERRCODE = '22023';
    END IF;
    IF message_body ~ r.forbidden THEN
        RAISE EXCEPTION '%', r.body_forbidden USING ERRCODE = '22023';
    END IF;
    IF octet_length(message_body) > (q.config ->> 'maximum_message_size')::integer THEN
        RAISE EXCEPTION '%', format(r.too_long, q.config ->> 'maximum_message_size')
            USING ERRCODE = '22023';
    END IF;
    delay := coalesce(delay_seconds, (q.config ->> 'delay_seconds')::double precision);
    IF delay < 0 OR delay > r.max_delay THEN
        RAISE EXCEPTION '%', format(r.delay_invalid, delay_seconds) USING ERRCODE = '22023';
    END IF;
    -- the store's send statement, as sends.py runs it for one message without
    -- attributes, trace header, group or deduplication id: the lean one unless the queue
    -- has a depth ceiling (EXECUTE plans a statement each time, and the lean one costs a
    -- fifth as much to plan)
    IF q.config ->> 'maximum_depth' IS NULL THEN
        EXECUTE r.plain_send_statement USING
            account_id, queue_name, NULL::float8,
            jsonb_build_array(jsonb_build_object(
                'i', message_id, 'b', message_body, 'a', '[]'::jsonb, 'd', delay
            ))::text;
        GET DIAGNOSTICS stored = ROW_COUNT;
    ELSE
        EXECUTE r.send_statement INTO sent USING
            account_id, queue_name, NULL::float8, ARRAY[message_id], ARRAY[message_body],
            ARRAY['[]'], ARRAY[NULL]::text[], ARRAY[delay], ARRAY[NULL]::text[],
            ARRAY[NULL]::text[], r.deduplication_window,
            (q.config ->> 'maximum_depth')::int8, ARRAY[NULL]::text[];
        IF sent.refused THEN
            RAISE EXCEPTION '%', format(r.queue_full, queue_name, q.config ->> 'maximum_depth')
                USING ERRCODE = '22023';
        END IF;
        stored := CASE WHEN sent.queue_id IS NULL THEN 0 ELSE 1 END;
    END IF;
    -- no row: the queue was deleted since it was read above
    IF stored = 0 THEN
        RAISE EXCEPTION '%', r.queue_missing USING ERRCODE = 'P0002';
    END IF;
    PERFORM pg_notify(r.channel, format(r.wakeup, account_id, queue_name));
    RETURN message_id;
END;
$$;
