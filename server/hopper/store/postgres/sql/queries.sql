-- The Postgres store's SQL, one named block per statement (loaded by schema.queries()).
-- Every statement that depends on time takes `now` as a parameter and falls back to the
-- database clock, `coalesce($n, extract(epoch FROM statement_timestamp()))`: tests drive
-- it with a fake clock; production passes NULL and every process agrees on the
-- database's time. statement_timestamp(), not now(): a FIFO receive first waits for its
-- queue's lock, and its leases must start when it claims, not when it began waiting.
-- Each named block starts with what it does and its parameters. Positional parameters
-- keep one meaning across sibling statements: a statement on a queue takes $1 account,
-- $2 queue name, and, when it depends on time, $3 now.
-- Statements that name a queue return its id (NULL when it does not exist) so the
-- store raises QueueNotFound without a second round trip.
-- A `-- fragment: name` block is no statement but text several statements share; a
-- statement's line `-- include: name` stands for it (store/postgres/schema.py), so that what
-- the three claims share is written once. A fragment's first comment lines, up to an
-- empty line, document it and are left out where it is included.
--
-- `sent_at + 0 > horizon`: the retention filter of the statements that find messages by
-- id or walk a queue in send order. Written as a bare `sent_at > horizon` it matches
-- messages_queue_sent (queue_id, sent_at), and a generic plan whose row estimate for a
-- queue is small (stale statistics, many small queues) reads every message of the
-- queue through that index instead: a claim of 10 from a queue of 5,000 cost 2-3 ms
-- of database CPU instead of 0.6, a delete of 10 as much. `+ 0` leaves the filter a
-- filter.

-- name: create_queue
-- Create a queue unless it exists; the queue's row either way, and whether it was
-- created. $1 account, $2 queue name, $3 now, $4 config (jsonb), $5 tags (jsonb).
WITH t AS (SELECT coalesce($3::float8, extract(epoch FROM statement_timestamp())::float8) AS now),
-- the new queue, unless one of that name exists (then nothing is inserted)
created AS (
    INSERT INTO queues (account, name, config, tags, created_at, last_modified_at)
    SELECT $1, $2, $4::jsonb, $5::jsonb, t.now, t.now FROM t
    ON CONFLICT (account, name) DO NOTHING
    RETURNING *
)
SELECT true AS created, c.* FROM created c
UNION ALL
SELECT false AS created, q.* FROM queues q
WHERE q.account = $1 AND q.name = $2 AND NOT EXISTS (SELECT 1 FROM created);

-- name: get_queue
-- A queue's row. $1 account, $2 queue name.
SELECT * FROM queues WHERE account = $1 AND name = $2;

-- name: get_queues
-- Queues' rows. $1 accounts, $2 queue names (parallel arrays); a queue that does not
-- exist has no row.
-- Concurrent look-ups of different queues share it (the store's coalescer).
SELECT q.* FROM queues q
JOIN unnest($1::text[], $2::text[]) AS k (account, name)
    ON q.account = k.account AND q.name = k.name;

-- name: list_queues
-- An account's queues by name. $1 account, $2 name prefix, $3 the name to list after
-- (NULL: from the start), $4 at most how many.
-- Byte order (COLLATE "C"), as the memory store sorts and as page tokens compare.
SELECT * FROM queues
WHERE account = $1
  AND starts_with(name, $2)
  AND ($3::text IS NULL OR name COLLATE "C" > $3::text COLLATE "C")
ORDER BY name COLLATE "C"
LIMIT $4;

-- name: update_queue
-- Replace a queue's config. $1 account, $2 queue name, $3 now, $4 config (jsonb).
UPDATE queues
SET config = $4::jsonb,
    last_modified_at = coalesce($3::float8, extract(epoch FROM statement_timestamp())::float8)
WHERE account = $1 AND name = $2
RETURNING *;

-- name: delete_queue
-- Delete a queue and its messages, recording when; its deletion time. $1 account, $2
-- queue name, $3 now.
WITH t AS (SELECT coalesce($3::float8, extract(epoch FROM statement_timestamp())::float8) AS now),
-- the queue; its receive attempts go with it (ON DELETE CASCADE), its messages and
-- deduplication ids below
gone AS (
    DELETE FROM queues WHERE account = $1 AND name = $2 RETURNING id, account, name
),
-- (no foreign key from messages: see migration 0070; racing sends are sweep_orphans's)
messages_gone AS (
    DELETE FROM messages WHERE queue_id = (SELECT id FROM gone)
),
-- (nor from fifo_dedup: migration 0090)
dedup_gone AS (
    DELETE FROM fifo_dedup WHERE queue_id = (SELECT id FROM gone)
)
INSERT INTO deleted_queues AS d (account, name, deleted_at)
SELECT gone.account, gone.name, t.now FROM gone, t
ON CONFLICT (account, name) DO UPDATE SET deleted_at = excluded.deleted_at
RETURNING d.deleted_at;

-- name: last_deleted_at
-- When a queue of that name was last deleted. $1 account, $2 queue name.
SELECT deleted_at FROM deleted_queues WHERE account = $1 AND name = $2;

-- name: set_tags
-- Add and remove a queue's tags. $1 account, $2 queue name, $3 tags to add or overwrite
-- (jsonb),
-- $4 tag keys to remove.
UPDATE queues SET tags = (tags || $3::jsonb) - $4::text[]
WHERE account = $1 AND name = $2
RETURNING *;

-- name: dead_letter_sources
-- The queues whose dead-letter rule names a queue. $1 account, $2 name of the target.
SELECT account, name FROM queues
WHERE config ? 'dead_letter'
  AND config -> 'dead_letter' ->> 'account' = $1
  AND config -> 'dead_letter' ->> 'name' = $2
ORDER BY name COLLATE "C", account COLLATE "C";

-- fragment: plain_insert
-- The insert of the plain sends, of the messages of $4 into the queue `q.id` at `t.now`.
-- $4: the messages in send order, one JSON array of {"i": id, "b": body, "a": attributes
-- (as stored), "h": trace header, "d": delay, "g": group id, and "l": the lease of a
-- message enqueued already delivered (NewMessage.lease), only on those}: one parameter,
-- where six arrays cost the server a type check of every element as it encodes them.
-- "a", "h", "d" and "g" may be left out where empty, None or 0 (most sends): the
-- server parsing and looking up those four was an eighth of the statement's
-- instructions (bench/README.md, branch pgsend).
-- A delivered message is as a claim leaves it: received once, now, under a fresh token.

INSERT INTO messages (queue_id, id, body, attributes, trace_header, sent_at, visible_at,
                      group_id, receive_count, token, first_received_at, received_at)
SELECT q.id, e.m ->> 'i', e.m ->> 'b', coalesce(e.m -> 'a', '[]'), e.m ->> 'h', t.now,
       t.now + coalesce((e.m ->> 'l')::float8, (e.m ->> 'd')::float8, 0), e.m ->> 'g',
       CASE WHEN e.m ? 'l' THEN 1 ELSE 0 END,
       CASE WHEN e.m ? 'l' THEN nextval('fencing_tokens') ELSE 0 END,
       CASE WHEN e.m ? 'l' THEN t.now END,
       CASE WHEN e.m ? 'l' THEN t.now END
FROM jsonb_array_elements($4::text::jsonb) WITH ORDINALITY AS e (m, ord)

-- fragment: plain_across
-- The clock `t` and the queues `q` (their place in $1/$2, from 1, and id; a queue that
-- does not exist has no row) of send_plain_across, send_plain_bare and
-- send_plain_across_leased. `t` materialized: read once, the planner pulls it up into
-- the insert, which then reckons the clock (a numeric, cast through its text) twice a
-- message, 6 % of send_plain_bare's instructions.

WITH t AS MATERIALIZED (SELECT coalesce($3::float8, extract(epoch FROM statement_timestamp())::float8) AS now),
q AS (
    SELECT k.place, queues.id
    FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS k (account, name, place)
    JOIN queues ON queues.account = k.account AND queues.name = k.name
)

-- name: send_plain_messages
-- Enqueue messages (no keys, no ceiling). $1 account, $2 queue name, $3 now, $4 the
-- messages (see plain_insert).
-- send_messages for the common case: a standard queue, no live keys, no depth ceiling.
-- Nothing to take or count, so just the insert: a third less database CPU per send.
-- No rows back: the queue does not exist.
WITH t AS (SELECT coalesce($3::float8, extract(epoch FROM statement_timestamp())::float8) AS now),
q AS (SELECT id FROM queues WHERE account = $1 AND name = $2)
-- include: plain_insert
CROSS JOIN q CROSS JOIN t
ORDER BY e.ord
RETURNING id, token, sent_at, visible_at;

-- name: send_plain_across
-- Enqueue messages into several queues at once (no keys, no ceiling, none leased). $1
-- the queues' accounts, $2 their names (parallel arrays), $3 now, $4 the messages (see
-- plain_insert), each with "q": its queue's place in $1/$2, from 1.
-- Concurrent plain sends of different queues share it (the store's coalescer): sends
-- spread round 1,000 queues otherwise found about one send per statement.
-- A row back per queue found, its place: its messages were all enqueued. Not a row a
-- message: nothing else of a message without a lease is needed, and the rows cost
-- both sides.
-- include: plain_across
-- the messages' insert (run to its end, though nothing reads it)
, sent AS (
-- include: plain_insert
JOIN q ON q.place = (e.m ->> 'q')::bigint CROSS JOIN t
ORDER BY e.ord
)
SELECT place FROM q;

-- name: send_plain_bare
-- send_plain_across for messages with nothing but an id and a body (no attributes,
-- trace header, delay, group id or lease: what most sends carry). $1, $2, $3 as there;
-- $4 the ids and $5 the bodies, each joined by the character U+001F (which SQS refuses
-- in a body: sends.py sends by this statement only texts in which each occurs as a
-- separator), $6 each one's queue's place in $1/$2 joined by commas, in send order.
-- Texts the server splits, where parsing JSON (plain_insert) was a fifth of the
-- statement's instructions; not arrays, which asyncpg checks element by element
-- (bench/README.md, branch pgsend).
-- A row back per queue found, as send_plain_across.
-- include: plain_across
-- the messages' insert (run to its end, though nothing reads it)
, sent AS (
INSERT INTO messages (queue_id, id, body, attributes, sent_at, visible_at)
SELECT q.id, e.id, e.body, '[]', t.now, t.now
FROM unnest(string_to_array($4::text, E'\x1f'), string_to_array($5::text, E'\x1f'),
            string_to_array($6::text, ',')::bigint[]) WITH ORDINALITY AS e (id, body, place, ord)
JOIN q ON q.place = e.place CROSS JOIN t
ORDER BY e.ord
)
SELECT place FROM q;

-- name: send_plain_across_leased
-- send_plain_across where some of the messages have a lease ("l"): a row back per
-- message enqueued (a message whose queue does not exist has none), the delivery's
-- token and times.
-- include: plain_across
-- include: plain_insert
JOIN q ON q.place = (e.m ->> 'q')::bigint CROSS JOIN t
ORDER BY e.ord
RETURNING id, token, sent_at, visible_at;

-- fragment: fifo_send_turn
-- The FIFO sends' turn (send_messages and send_fifo_messages): the CTE `turn`, a row
-- once this statement holds its queue's send lock (an advisory lock until its commit;
-- no row: no queue, or a standard one), over the statement's `q` (with its `fifo`).
-- FIFO sends of a queue take turns, so that they commit in the order of the seqs they
-- take. Two statements of a queue's sends in flight at once (store/postgres/
-- coalesce.py; a send in a caller's transaction, hopper.enqueue) would otherwise let a
-- receive claim a group's later message while an earlier one, not yet committed,
-- then becomes the group's head and is delivered with the later one in flight. The
-- claims of the statement read `turn` before they take sequence numbers or seqs. The
-- lock's keys: the schema (queue ids repeat across schemas) and the queue, in the
-- two-key space (the receive lock, pool.receive_lock, is in the other). What else
-- draws places in a FIFO queue takes the turn too: a claim dead-lettering into it
-- (fragment claim_deliveries, `poison`) and a move into it (move_messages,
-- `turns`), each after its source's receive lock, several in the order of their
-- queues' ids. Not a lock the sends share and a receive takes alone: sends and
-- receives of a queue then took turns, and FIFO sends beside receives fell by two
-- thirds (bench/README.md, branch pgfifobatch).

-- the queue's send turn, taken once
turn AS MATERIALIZED (
    SELECT pg_advisory_xact_lock(hashtext(current_schema()), hashint8(q.id))
    FROM q WHERE q.fifo
),

-- fragment: dedup_claim
-- The FIFO deduplication claim of send_messages and send_fifo_messages, written once: the
-- CTE `claimed`, over the statement's `claimable` (ord, id, window_key, window_seconds:
-- the messages that take a window, and its length), `q` (the queue) and `t` (the clock).

-- take each deduplication window unless a live (unexpired) holder exists; the rows
-- returned are the messages that are really enqueued, with their sequence numbers
claimed AS (
    INSERT INTO fifo_dedup AS f (queue_id, dedup_id, message_id, sequence_number, expires_at)
    SELECT q.id, c.window_key, c.id, nextval('fifo_sequence_numbers'),
           t.now + c.window_seconds
    FROM claimable c CROSS JOIN q CROSS JOIN t
    ORDER BY c.ord
    ON CONFLICT (queue_id, dedup_id) DO UPDATE
        SET message_id = excluded.message_id,
            sequence_number = excluded.sequence_number,
            expires_at = excluded.expires_at
        WHERE f.expires_at <= (SELECT now FROM t)
    RETURNING f.message_id, f.sequence_number
),

-- name: send_messages
-- Enqueue messages with deduplication, live keys and the depth ceiling. $1 account, $2
-- queue name, $3 now,
-- $4 ids, $5 bodies, $6 attributes, $7 trace headers, $8 delays, $9 group ids,
-- $10 deduplication ids, $11 the deduplication window (seconds), $12, $13 below.
-- $4.. are parallel arrays, one element per message, in send order ($6: JSON texts,
-- since asyncpg would read a jsonb[] of JSON arrays as a deeper array). $12: the depth
-- ceiling, or NULL (then the queue's messages are not counted at all). $13: FIFO, the
-- key each message's deduplication window is kept under (NewMessage.window_key).
WITH t AS (SELECT coalesce($3::float8, extract(epoch FROM statement_timestamp())::float8) AS now),
-- the queue (no row: nothing is sent, and the result says so)
q AS (
    SELECT id, (config ->> 'fifo')::boolean AS fifo,
           t.now - (config ->> 'message_retention_period')::float8 AS horizon
    FROM queues CROSS JOIN t
    WHERE account = $1 AND name = $2
),
-- with a ceiling, the queue's span of send order: seq is unique, so the span bounds how
-- many rows the queue holds, from two probes of messages_queue_order
span AS (
    SELECT coalesce(max(m.seq) - min(m.seq) + 1, 0) AS n FROM messages m
    WHERE m.queue_id = (SELECT id FROM q) AND $12::int8 IS NOT NULL
),
-- how many of the batch fit under the ceiling (NULL: all of it). Counted only when the
-- span leaves less room than the batch needs: then its unexpired messages, at most $12
-- (a CASE evaluates only the branch it takes). Concurrent sends do not see each other's
-- rows, so together they may pass the ceiling (no lock on the send path). MATERIALIZED:
-- computed once, not once per use in `input`.
room AS MATERIALIZED (
    SELECT CASE
        WHEN $12::int8 IS NULL THEN NULL
        WHEN $12::int8 - (SELECT n FROM span) >= cardinality($4::text[]) THEN NULL
        ELSE $12::int8 - (
            SELECT count(*) FROM (
                -- in send order, so the count walks messages_queue_order, not the table
                SELECT 1 FROM messages m
                WHERE m.queue_id = (SELECT id FROM q) AND m.sent_at + 0 > (SELECT horizon FROM q)
                ORDER BY m.seq
                LIMIT $12::int8
            ) d
        )
    END AS n
),
-- the batch, numbered in send order; the entries beyond the room are refused
input AS (
    SELECT i.*, room.n IS NULL OR i.ord <= room.n AS admitted FROM unnest(
        $4::text[], $5::text[], $6::text[], $7::text[], $8::float8[], $9::text[], $10::text[],
        $13::text[]
    ) WITH ORDINALITY
        AS i (id, body, attributes, trace_header, delay, group_id, dedup_id, dedup_key, ord)
    CROSS JOIN room
),
-- include: fifo_send_turn
-- FIFO: the admitted messages, each with the key its deduplication window is kept
-- under, once the queue's send turn is this statement's
claimable AS (
    SELECT i.ord, i.id, coalesce(i.dedup_key, i.id) AS window_key,
           $11::float8 AS window_seconds
    FROM input i
    WHERE i.admitted AND (SELECT fifo FROM q) AND (SELECT true FROM turn)
),
-- include: dedup_claim
-- the messages themselves: all of them on a standard queue, the claimed ones on FIFO
-- (but for those sent with a live key: `keyed`, below)
stored AS (
    INSERT INTO messages (queue_id, id, body, attributes, trace_header, sent_at, visible_at,
                          group_id, dedup_id, sequence_number)
    SELECT q.id, i.id, i.body, i.attributes::jsonb, i.trace_header, t.now, t.now + i.delay,
           i.group_id, CASE WHEN q.fifo THEN i.dedup_id END, c.sequence_number
    FROM input i CROSS JOIN q CROSS JOIN t
    LEFT JOIN claimed c ON c.message_id = i.id
    WHERE i.admitted AND (NOT q.fifo OR c.message_id IS NOT NULL)
      AND (q.fifo OR i.dedup_id IS NULL)
    ORDER BY i.ord
    RETURNING id
),
-- standard queues: an expired message still holding a live key of the batch (the
-- sweeper has not reached it yet) gives the key up by going
freed AS (
    DELETE FROM messages m USING input i
    WHERE m.queue_id = (SELECT id FROM q) AND NOT (SELECT fifo FROM q)
      AND m.live_key = i.dedup_id AND m.sent_at <= (SELECT horizon FROM q)
    RETURNING 1
),
-- standard queues, the messages sent with a live key (a hopper extension): a key
-- already held is not taken again, the holder's row comes back instead (a no-op
-- update, which also waits for a concurrent sender of the key to commit), so the
-- answer names it without a second look
keyed AS (
    INSERT INTO messages AS m (queue_id, id, body, attributes, trace_header, sent_at,
                               visible_at, group_id, dedup_id, live_key)
    SELECT q.id, i.id, i.body, i.attributes::jsonb, i.trace_header, t.now, t.now + i.delay,
           i.group_id, i.dedup_id, i.dedup_id
    FROM input i CROSS JOIN q CROSS JOIN t
    WHERE i.admitted AND NOT q.fifo AND i.dedup_id IS NOT NULL
      -- only once `freed` has run, so the keys it freed are free for this insert
      AND (SELECT count(*) FROM freed) >= 0
    ORDER BY i.ord
    ON CONFLICT (queue_id, live_key) WHERE live_key IS NOT NULL
        DO UPDATE SET live_key = excluded.live_key
    RETURNING m.id, m.live_key
)
SELECT i.ord,
       (SELECT id FROM q) AS queue_id,
       NOT i.admitted AS refused,
       -- standard queues: the message holding the send's live key, unless the send's own
       (SELECT k.id FROM keyed k WHERE k.live_key = i.dedup_id AND k.id <> i.id)
           AS live_holder,
       coalesce(c.message_id, f.message_id) AS message_id,
       coalesce(c.sequence_number, f.sequence_number) AS sequence_number,
       coalesce((SELECT fifo FROM q), false) AND i.admitted AND c.message_id IS NULL
           AS duplicate
FROM input i
LEFT JOIN claimed c ON c.message_id = i.id
-- the live holder of a duplicate's deduplication id, as it was before this statement:
-- one probe of fifo_dedup_pkey per duplicate, none for a message enqueued. (A plain
-- join was a hash join over the queue's whole window in the generic plan a connection
-- made while the window was small: a FIFO send read every deduplication id of the last
-- five minutes.) LIMIT keeps the subquery apart, so its guard on the outer row is a
-- one-time filter, not a join filter.
LEFT JOIN LATERAL (
    SELECT f.message_id, f.sequence_number FROM fifo_dedup f
    WHERE c.message_id IS NULL AND i.admitted
      AND f.queue_id = (SELECT id FROM q) AND f.dedup_id = coalesce(i.dedup_key, i.id)
    LIMIT 1
) f ON true
ORDER BY i.ord;

-- name: send_fifo_messages
-- Enqueue messages on a FIFO queue without a depth ceiling, each unless a live holder of
-- its deduplication window exists. $1 account, $2 queue name, $3 now, $4 the messages,
-- $5 the deduplication window (seconds).
-- send_messages for FIFO queues without a ceiling: nothing to count and no live keys,
-- so only the window's claim and the insert, a plan of half as many nodes (35, not 70:
-- one message sent cost the database 310 us instead of 450, its commit aside). A row
-- per message in send order: queue_id, duplicate, sequence_number, and message_id, a
-- duplicate's holder (NULL for a message enqueued, and for a duplicate whose holder
-- this statement could not see).
-- $4: one JSON array in send order, as send_plain_messages's but that "a", "h" and
-- "d" are left out where empty, null or 0, with "k" the deduplication id and "w" the
-- key its window is kept under where that is not "k" (NewMessage.window_key; without
-- either, the message id). No rows back: the queue does not exist.
WITH t AS (SELECT coalesce($3::float8, extract(epoch FROM statement_timestamp())::float8) AS now),
q AS (SELECT id, true AS fifo FROM queues WHERE account = $1 AND name = $2),
-- include: fifo_send_turn
-- the batch, numbered in send order
input AS (
    SELECT e.ord, e.m ->> 'i' AS id,
           coalesce(e.m ->> 'w', e.m ->> 'k', e.m ->> 'i') AS window_key, e.m
    FROM jsonb_array_elements($4::text::jsonb) WITH ORDINALITY AS e (m, ord)
),
-- every message, with the key its deduplication window is kept under, once the
-- queue's send turn is this statement's
claimable AS (
    SELECT i.ord, i.id, i.window_key, $5::float8 AS window_seconds FROM input i
    WHERE (SELECT true FROM turn)
),
-- include: dedup_claim
-- the claimed messages themselves
stored AS (
    INSERT INTO messages (queue_id, id, body, attributes, trace_header, sent_at, visible_at,
                          group_id, dedup_id, sequence_number)
    SELECT q.id, i.id, i.m ->> 'b', coalesce(i.m -> 'a', '[]'), i.m ->> 'h', t.now,
           t.now + coalesce((i.m ->> 'd')::float8, 0), i.m ->> 'g', i.m ->> 'k',
           c.sequence_number
    FROM input i JOIN claimed c ON c.message_id = i.id CROSS JOIN q CROSS JOIN t
    ORDER BY i.ord
)
SELECT q.id AS queue_id, c.message_id IS NULL AS duplicate, f.message_id,
       coalesce(c.sequence_number, f.sequence_number) AS sequence_number
FROM input i CROSS JOIN q
LEFT JOIN claimed c ON c.message_id = i.id
-- the live holder of a duplicate's window, as it was before this statement (one probe
-- per duplicate, as in send_messages)
LEFT JOIN LATERAL (
    SELECT f.message_id, f.sequence_number FROM fifo_dedup f
    WHERE c.message_id IS NULL AND f.queue_id = q.id AND f.dedup_id = i.window_key
    LIMIT 1
) f ON true
ORDER BY i.ord;

-- name: dedup_holder
-- The message holding a deduplication window. $1 account, $2 queue name, $3 the window's
-- key.
-- A duplicate whose original committed while our send ran (the statement's snapshot
-- could not see it): look the holder up again.
SELECT f.message_id, f.sequence_number FROM fifo_dedup f
JOIN queues q ON q.id = f.queue_id
WHERE q.account = $1 AND q.name = $2 AND f.dedup_id = $3;

-- name: lock_queue_for_receive
-- Take a queue's receive lock for the transaction. $1 the lock's key (pool.receive_lock:
-- a number of the queue's account and name).
-- FIFO receives of one queue take turns: group locking must see the leases of the
-- receive before it, which a statement running concurrently could not. (A FIFO
-- receive sends the same lock with its BEGIN: pool.receive_turn.)
SELECT pg_advisory_xact_lock($1::int8);

-- name: replay_receive_attempt
-- Replay a FIFO receive attempt. $1 account, $2 queue name, $3 now, $4 attempt id, $5 the
-- new lease
-- (seconds), $6 the attempt window (seconds).
-- A FIFO receive with a ReceiveRequestAttemptId ($4): the deliveries of the queue's
-- attempt of that id, again with a fresh lease ($5), when it was made less than $6
-- seconds ago and none of its messages changed since; no rows otherwise. Runs under
-- the queue's receive lock, before the claim.
WITH t AS (SELECT coalesce($3::float8, extract(epoch FROM statement_timestamp())::float8) AS now),
q AS (
    SELECT s.id, t.now, t.now - (s.config ->> 'message_retention_period')::float8 AS horizon
    FROM queues s CROSS JOIN t
    WHERE s.account = $1 AND s.name = $2
),
-- the attempt, within its window
a AS (
    SELECT r.* FROM receive_attempts r
    WHERE r.queue_id = (SELECT id FROM q) AND r.attempt_id = $4
      AND r.made_at > (SELECT now FROM q) - $6::float8
),
-- its deliveries, one row each
entries AS (
    SELECT e.* FROM a
    CROSS JOIN unnest(a.message_ids, a.tokens, a.deadlines) AS e (id, token, deadline)
),
-- whether every one of them is still as the attempt left it
unchanged AS (
    SELECT EXISTS (SELECT 1 FROM a) AND (
        SELECT count(*) FROM entries e
        JOIN messages m
            ON m.queue_id = (SELECT id FROM q) AND m.id = e.id
            AND m.token = e.token AND m.visible_at - m.retry_delay = e.deadline
            AND m.sent_at + 0 > (SELECT horizon FROM q)
    ) = (SELECT count(*) FROM entries) AS ok
),
-- the same deliveries (token and receive count unchanged), with a fresh lease
replayed AS (
    UPDATE messages m SET visible_at = (SELECT now FROM q) + $5::float8 + m.retry_delay
    FROM entries e
    WHERE (SELECT ok FROM unchanged) AND m.queue_id = (SELECT id FROM q) AND m.id = e.id
    RETURNING m.*
),
-- the attempt remembers the new deadlines, so it can be replayed again
renewed AS (
    UPDATE receive_attempts r
    -- (each lease's end as a delivery reports it: visible_at less the retry delay)
    SET deadlines = ARRAY(
        SELECT x.visible_at - x.retry_delay
        FROM unnest(r.message_ids) WITH ORDINALITY AS i (id, ord)
        JOIN replayed x ON x.id = i.id
        ORDER BY i.ord)
    WHERE (SELECT ok FROM unchanged) AND r.queue_id = (SELECT id FROM q) AND r.attempt_id = $4
)
SELECT * FROM replayed ORDER BY seq;

-- name: record_receive_attempt
-- Record a FIFO receive attempt. $1 account, $2 queue name, $3 now, $4 attempt id, $5
-- message ids,
-- $6 their tokens, $7 their lease deadlines, $8 the attempt window (seconds).
-- What a FIFO receive with a ReceiveRequestAttemptId ($4) delivered: per message its id,
-- token and lease deadline ($5..$7), replacing an earlier attempt of that id.
WITH t AS (SELECT coalesce($3::float8, extract(epoch FROM statement_timestamp())::float8) AS now),
q AS (SELECT id FROM queues WHERE account = $1 AND name = $2),
-- the queue's other attempts past their window ($8) go
forgotten AS (
    DELETE FROM receive_attempts r
    WHERE r.queue_id = (SELECT id FROM q) AND r.attempt_id <> $4
      AND r.made_at <= (SELECT now FROM t) - $8::float8
)
INSERT INTO receive_attempts AS r (queue_id, attempt_id, made_at, message_ids, tokens, deadlines)
SELECT q.id, $4, t.now, $5::text[], $6::int8[], $7::float8[] FROM q CROSS JOIN t
ON CONFLICT (queue_id, attempt_id) DO UPDATE
    SET made_at = excluded.made_at, message_ids = excluded.message_ids,
        tokens = excluded.tokens, deadlines = excluded.deadlines;

-- name: forget_dedup_ids
-- Drop a queue's deduplication ids past their window. $1 account, $2 queue name, $3 now.
-- Deduplication ids past their window are only reused rows in waiting; FIFO receives
-- sweep them (a turn in DEDUP_SWEEP_EVERY, before its claims: fifo.py) so a queue's
-- table does not grow forever.
DELETE FROM fifo_dedup
WHERE queue_id = (SELECT id FROM queues WHERE account = $1 AND name = $2)
  AND expires_at <= coalesce($3::float8, extract(epoch FROM statement_timestamp())::float8);

-- fragment: claim_opening
-- The claims' opening (receive_messages, receive_fifo_messages, receive_fair_messages
-- include it): the clock reading, the queue with its dead-letter rule resolved, and the
-- housekeeping of its head. Its CTEs read $1 account, $2 queue name, $3 now. The
-- claims differ only in how they pick; what they share is written here once.

WITH t AS (SELECT coalesce($3::float8, extract(epoch FROM statement_timestamp())::float8) AS now),
-- the queue: retention horizon, FIFO flag, dead-letter rule with its target resolved
q AS (
    SELECT s.id, s.account, s.name, t.now,
           t.now - (s.config ->> 'message_retention_period')::float8 AS horizon,
           (s.config ->> 'fifo')::boolean AS fifo,
           d.id AS dead_letter_id, (d.config ->> 'fifo')::boolean AS dead_letter_fifo,
           (s.config -> 'dead_letter' ->> 'max_receive_count')::int AS max_receive_count,
           (s.config -> 'retry_policy' ->> 'base')::float8 AS retry_base,
           (s.config -> 'retry_policy' ->> 'maximum')::float8 AS retry_maximum,
           s.config -> 'retry_policy' ->> 'jitter' AS retry_jitter
    FROM queues s CROSS JOIN t
    LEFT JOIN queues d
        ON d.account = s.config -> 'dead_letter' ->> 'account'
        AND d.name = s.config -> 'dead_letter' ->> 'name'
    WHERE s.account = $1 AND s.name = $2
),
-- housekeeping: messages past retention at the head of the queue are dropped (bounded,
-- so a receive never pays for a whole backlog); the rest are filtered out below. Not by
-- a claim of nothing ($4 = 0: a FIFO turn's first statement, which runs before it has
-- the queue's receive lock, and whose deletes would hold rows the turn holding the lock
-- may be about to drop)
expired AS (
    DELETE FROM messages m
    WHERE $4::int8 > 0 AND m.queue_id = (SELECT id FROM q)
      AND m.id IN (
        SELECT head.id FROM (
            SELECT e.id, e.sent_at FROM messages e
            WHERE e.queue_id = (SELECT id FROM q)
            ORDER BY e.seq LIMIT 8
        ) head
        WHERE head.sent_at <= (SELECT horizon FROM q)
      )
      AND m.sent_at <= (SELECT horizon FROM q)
),

-- fragment: claim_deliveries
-- The claims' end (after each claim's `picked`: queue_id, id, seq, receive_count,
-- carried_receive_count and ctid (of the row its lock read) of the messages it claims):
-- poison messages move to the dead-letter queue, the others are delivered. It stops
-- inside `claimed`, before its RETURNING: each claim returns its deliveries with its
-- own order (seq, place, rank).
-- $5: the lease (seconds).

-- poison: picked messages already received max_receive_count times from this queue
-- (receives counted before they arrived here are carried, not counted again) move to
-- the dead-letter queue as new arrivals there, instead of being delivered; their places
-- in its send order are drawn after sorting, so they arrive in the order they had here
-- (a FIFO dead-letter queue keeps each group's order).
-- `turn`: a FIFO dead-letter queue's send turn (fragment fifo_send_turn), taken by the
-- first poison message before it draws its place (a select list is computed left to
-- right; taken again, a lock held already costs nothing), so only by a claim that
-- moves some there: the moves commit in the order of their places, as sends do, or a
-- receive there could claim a moved message while a send of its group, earlier in send
-- order and not yet committed, was not yet there. (A CTE of its own, read by this one,
-- cost every claim 4 plan nodes started and never run: 54,000 instructions a plain
-- claim, bench/README.md, branch fifogap.) Deadlocks: the claim
-- holds its own queue's receive lock (pool.receive_lock), then waits for this turn;
-- whoever holds the turn (a send, a move, a claim dead-lettering there, a caller's
-- transaction through hopper.enqueue) takes no receive lock after it (the receive lock
-- is always taken first, and nothing takes it while holding a send turn), and waits for
-- no message this claim locked (a send locks none; another claim or move locks its own
-- queue's messages, SKIP LOCKED), so no cycle closes
poison AS (
    SELECT p.queue_id, p.id,
           CASE WHEN q.dead_letter_fifo
                THEN pg_advisory_xact_lock(hashtext(current_schema()),
                                           hashint8(q.dead_letter_id)) IS NULL
           END AS turn,
           nextval('message_order') AS seq
    FROM picked p, q
    WHERE q.dead_letter_id IS NOT NULL
      AND p.receive_count - p.carried_receive_count >= q.max_receive_count
    ORDER BY p.seq
),
-- the move: the receive count and first receive go along (AWS counts receives "across
-- all queues"; the move itself is no receive); token 0, so no earlier receipt names
-- it there and its next delivery draws a token above all earlier ones
moved AS (
    UPDATE messages m
    SET queue_id = q.dead_letter_id, seq = x.seq, visible_at = q.now, retry_delay = 0,
        carried_receive_count = m.receive_count, token = 0, live_key = NULL,
        dead_letter_source_account = q.account, dead_letter_source_name = q.name
    FROM poison x, q
    WHERE m.queue_id = x.queue_id AND m.id = x.id
    RETURNING m.id
),
-- the deliveries: a fresh fencing token and a lease each, the backoff after it
claimed AS (
    UPDATE messages m
    SET receive_count = m.receive_count + 1,
        token = nextval('fencing_tokens'),
        visible_at = q.now + $5::float8 + b.delay,
        retry_delay = b.delay,
        first_received_at = coalesce(m.first_received_at, q.now),
        received_at = q.now
    -- b: the backoff that follows the delivery's lease should it end without a delete
    -- (Hopper.RetryPolicy): core/retries.py's RetryPolicy.delay_after, written again
    -- here so that the claim decides it in its own statement
    -- (tests/contract/test_retries.py holds both to the same bounds). None without a
    -- policy, nor for a delivery after which the dead-letter rule takes the message:
    -- no retry follows it. A subquery per message, not a CTE joined back by id: the
    -- generic plan joined that CTE to `picked` by a nested loop, every pair compared,
    -- a claim of 160 messages 25,600 comparisons (backends 42-47 us a drained message
    -- against 17-23). Its random() keeps it a subquery of its own (PostgreSQL pulls
    -- up no volatile subquery), so both uses of b.delay read one draw.
    FROM picked p CROSS JOIN q CROSS JOIN LATERAL (
        SELECT CASE WHEN q.retry_base IS NULL
                         OR (q.dead_letter_id IS NOT NULL
                             AND p.receive_count + 1 - p.carried_receive_count
                                 >= q.max_receive_count)
                    THEN 0::float8
                    ELSE least(q.retry_maximum,
                               q.retry_base * power(2::float8, least(p.receive_count, 64)))
                         * CASE q.retry_jitter WHEN 'none' THEN 1::float8
                                               WHEN 'equal' THEN 0.5 + random() / 2
                                               ELSE random() END
               END AS delay
    ) b
    -- by the address of the row `picked` locked (a Tid Scan), not a primary-key probe
    -- a message: the probes were a tenth of a drain's database CPU. The row is locked,
    -- so it stays at that address; should a concurrent change have committed between
    -- the statement's snapshot and its lock, the address is of a version the snapshot
    -- does not see, and the message is left visible, not delivered (never twice; and
    -- no FIFO run is cut there: nothing changes a receivable FIFO message outside its
    -- queue's receive lock).
    WHERE m.ctid = p.ctid AND m.queue_id = p.queue_id AND m.id = p.id
      AND NOT (q.dead_letter_id IS NOT NULL
               AND p.receive_count - p.carried_receive_count >= q.max_receive_count)

-- name: receive_messages
-- Claim receivable messages (the plain claim), moving poison ones to the dead-letter
-- queue. $1 account, $2 queue name, $3 now, $4 at most how many, $5 the lease (seconds),
-- $6 ids this receive claimed already. Its rows: the deliveries, and the queue's facts.
-- include: claim_opening
-- the oldest receivable messages, locked; one another receiver holds is skipped, and
-- so is one this receive claimed already ($6: a zero lease left it visible)
picked AS (
    SELECT m.queue_id, m.id, m.seq, m.receive_count, m.carried_receive_count, m.ctid
    FROM messages m
    WHERE m.queue_id = (SELECT id FROM q)
      AND m.visible_at <= (SELECT now FROM q)
      AND m.sent_at + 0 > (SELECT horizon FROM q)
      AND m.id <> ALL($6::text[])
    ORDER BY m.seq
    LIMIT $4
    FOR UPDATE OF m SKIP LOCKED
),
-- include: claim_deliveries
    -- (address: where the delivery's row is now, for its delete: delete_messages; the
    -- other two claims return it too)
    RETURNING m.*, m.ctid::text AS address
)
SELECT (SELECT id FROM q) IS NOT NULL AS queue_found, (SELECT count(*) FROM moved) AS moved, c.*
FROM (SELECT 1) AS one
LEFT JOIN claimed c ON true
ORDER BY c.seq;

-- fragment: fifo_group_run
-- A served group's messages from its head, in send order (the FIFO claims' `first_run`,
-- fragment fifo_runs, and receive_fifo_turn's `chosen`): a lateral read of the group of
-- `served h`, each message with whether it and all before it are deliverable (its run)
-- and its place; the including claim cuts it with its own LIMIT, on the line after.

    CROSS JOIN LATERAL (
        SELECT m.id, m.seq, m.group_id, m.ctid,
               bool_and(m.visible_at <= (SELECT now FROM q)) OVER w AS deliverable,
               row_number() OVER w AS place
        FROM messages m
        WHERE m.queue_id = (SELECT id FROM q) AND m.group_id = h.group_id
          AND m.seq >= h.seq
          AND m.sent_at + 0 > (SELECT horizon FROM q) AND m.id <> ALL($6::text[])
        WINDOW w AS (ORDER BY m.seq)
        ORDER BY m.seq

-- fragment: fifo_runs
-- The FIFO claims' runs (receive_fifo_messages, receive_fifo_walk include it, after each
-- claim's `served`: group_id, seq and visible_at of the head of each group the receive
-- serves, and its rank among them, at most $4 groups): the messages each served group
-- gives, as `chosen` (id, seq, group_id, ctid and place, the message's place in the
-- receive's answer), locked by fragment fifo_locks, which follows it. The claim's answer is
-- the served groups' deliverable runs, each whole before the next, cut at $4 messages: a
-- group's run is its messages from the head up to, not including, the first in flight or
-- delayed (a message whose lease ended is deliverable again while a later one is in
-- flight).

-- the first served group's run: usually all a receive takes (read alone: the runs of all
-- served groups, sorted together, read 4 or 5 groups for the one used, a fifth of the
-- FIFO claim)
first_run AS MATERIALIZED (
    SELECT x.id, x.seq, x.group_id, x.ctid, x.place
    FROM served h
-- include: fifo_group_run
        LIMIT $4
    ) x
    WHERE h.rank = 1 AND x.deliverable
),
-- the other served groups' runs, read only when the first falls short of $4
other_runs AS (
    SELECT r.id, r.seq, r.group_id, r.ctid,
           (SELECT count(*) FROM first_run) + row_number() OVER (ORDER BY h.rank, r.seq)
               AS place
    FROM served h
    CROSS JOIN LATERAL (
        SELECT x.id, x.seq, x.group_id, x.ctid FROM (
            SELECT m.id, m.seq, m.group_id, m.ctid,
                   bool_and(m.visible_at <= (SELECT now FROM q)) OVER (ORDER BY m.seq)
                       AS deliverable
            FROM messages m
            WHERE m.queue_id = (SELECT id FROM q) AND m.group_id = h.group_id
              AND m.seq >= h.seq
              AND m.sent_at + 0 > (SELECT horizon FROM q) AND m.id <> ALL($6::text[])
            ORDER BY m.seq LIMIT $4
        ) x
        WHERE x.deliverable
    ) r
    WHERE h.rank > 1 AND (SELECT count(*) FROM first_run) < $4
    ORDER BY h.rank, r.seq
    LIMIT $4
),
chosen AS MATERIALIZED (
    SELECT * FROM first_run
    UNION ALL
    SELECT * FROM other_runs WHERE place <= $4
),

-- fragment: fifo_locks
-- The FIFO claims' locks (after each claim's `chosen`: id, seq, group_id, ctid and place
-- of the messages its groups' runs give, in the order it claims them): the chosen
-- messages, locked, as `picked` (queue_id, id, seq, receive_count, carried_receive_count,
-- ctid, place), each group's run cut at a message locked elsewhere.

-- locked, by the address the run's read found each at (a Tid Scan, not a primary-key
-- probe a message). FIFO receives of a queue take turns (lock_queue_for_receive), so a
-- chosen message is locked elsewhere only by a statement deleting it (a purge, the
-- sweeper); one changed since the read is at another address and is skipped, as one
-- locked elsewhere is
locked AS MATERIALIZED (
    SELECT m.queue_id, m.id, m.seq, m.group_id, m.receive_count, m.carried_receive_count,
           m.ctid, c.place
    FROM chosen c JOIN messages m ON m.ctid = c.ctid
    WHERE m.queue_id = (SELECT id FROM q) AND m.id = c.id
    FOR UPDATE OF m SKIP LOCKED
),
-- the messages this receive claims: all that were chosen, unless one was skipped; then a
-- run ends where a message of it was skipped
picked AS (
    SELECT l.queue_id, l.id, l.seq, l.receive_count, l.carried_receive_count, l.ctid, l.place
    FROM locked l
    WHERE (SELECT count(*) FROM locked) = (SELECT count(*) FROM chosen)
       OR NOT EXISTS (
        SELECT 1 FROM chosen e
        WHERE e.group_id = l.group_id AND e.seq < l.seq
          AND e.id NOT IN (SELECT id FROM locked)
    )
),

-- name: receive_fifo_messages
-- Claim a FIFO queue's receivable messages in AWS's order, moving poison ones to the
-- dead-letter queue, finding the groups' heads by a probe of each group. $1 account,
-- $2 queue name, $3 now, $4 at most how many, $5 the lease (seconds), $6 ids this
-- receive claimed already, $7 the receive's place in its turn, returned in every row
-- (`turn_place`: a turn's claims go in one round trip, and their rows come back as one
-- list), $8 the queue's receive lock to take (below) or NULL. Its rows: the deliveries in
-- claim order, and the queue's facts.
-- receive_messages but for how it picks (the rest is the claims' shared fragments) and
-- the order of its answer. Runs under the queue's receive lock: what it reads of the
-- queue's groups cannot change under it but by deletion. A turn's round trip opens with
-- this statement claiming nothing ($4 = 0) and taking the lock ($8, pool.receive_lock;
-- it is held to the end of the round trip's transaction), and each claim after it reads
-- the queue afresh, under the lock (PostgresQueueStore._fifo_turn); a claim sent alone
-- runs in a transaction that took the lock before it (pool.receive_turn).
-- The claim of a queue of few groups, and of one whose groups are mostly in flight; a
-- queue of many groups is claimed by receive_fifo_walk (store/postgres/fifo.py chooses),
-- which is this statement but for how it finds the heads.
-- include: claim_opening
-- the queue's receive lock, taken by a turn's first statement ($8; none when NULL). Only
-- a statement that claims nothing takes it: its own reads began before it had it
turn AS (SELECT pg_advisory_xact_lock($8::int8)),
-- the queue's groups, one probe of messages_queue_group each (a loose index scan: a
-- backlog of many messages in few groups costs a few probes, not a read of the queue)
groups AS (
    WITH RECURSIVE g (group_id) AS (
        (SELECT m.group_id FROM messages m
         WHERE $4::int8 > 0 AND m.queue_id = (SELECT id FROM q) AND m.group_id IS NOT NULL
         ORDER BY m.group_id LIMIT 1)
        UNION ALL
        SELECT (SELECT m.group_id FROM messages m
                WHERE m.queue_id = (SELECT id FROM q) AND m.group_id > g.group_id
                ORDER BY m.group_id LIMIT 1)
        FROM g WHERE g.group_id IS NOT NULL
    )
    SELECT group_id FROM g WHERE group_id IS NOT NULL
),
-- each deliverable group's head: its oldest message, leaving out those this receive
-- claimed already ($6, as if gone); a group is deliverable when its head is visible,
-- and it became available at the head's visible_at (sent, or the moment its lease
-- ended)
heads AS MATERIALIZED (
    SELECT h.* FROM groups g
    CROSS JOIN LATERAL (
        SELECT m.group_id, m.seq, m.visible_at, m.receive_count FROM messages m
        WHERE m.queue_id = (SELECT id FROM q) AND m.group_id = g.group_id
          AND m.sent_at + 0 > (SELECT horizon FROM q) AND m.id <> ALL($6::text[])
        ORDER BY m.seq LIMIT 1
    ) h
    WHERE h.visible_at <= (SELECT now FROM q)
),
-- the groups a receive serves, in the order AWS serves them: by when their run became
-- available, ties in sequence order; no more than the $4 first (each gives a message)
served AS MATERIALIZED (
    SELECT h.group_id, h.seq, h.visible_at,
           row_number() OVER (ORDER BY h.visible_at, h.seq) AS rank
    FROM heads h
    ORDER BY h.visible_at, h.seq
    LIMIT $4
),
-- include: fifo_runs
-- include: fifo_locks
-- include: claim_deliveries
    RETURNING m.*, m.ctid::text AS address, p.place
)
SELECT (SELECT id FROM q) IS NOT NULL AS queue_found, (SELECT count(*) FROM moved) AS moved,
       -- whether the queue is one to walk (receive_fifo_walk; store/postgres/fifo.py):
       -- more than 64 groups, where a probe each costs more than the walk, and at least
       -- $4 fresh heads among them, which the walk finds (with fewer, most groups are in
       -- flight, and the walk would read the messages behind their heads)
       (SELECT count(*) FROM groups) > 64
           AND (SELECT count(*) FROM heads WHERE receive_count = 0) >= $4 AS many_groups,
       (SELECT $7::int4 FROM turn) AS turn_place, c.*
FROM (SELECT 1) AS one
LEFT JOIN claimed c ON true
ORDER BY c.place;

-- fragment: fifo_walk
-- The walk of a FIFO queue of many groups (receive_fifo_walk, receive_fifo_turn include it,
-- after claim_opening): the receive lock ($8), the groups' heads found by walking the
-- queue in send order, whether the walk found all it needs (`walked`), and `served`,
-- the $4 groups served first (group_id, seq, visible_at, rank).

-- the queue's receive lock ($8), as in receive_fifo_messages
turn AS (SELECT pg_advisory_xact_lock($8::int8)),
-- the queue's visible messages in sequence order (messages_queue_order), each with
-- whether it is its group's head (no earlier message in its group: a probe of
-- messages_queue_group, in the walk's own select list, never a join reading the queue),
-- and `found`, the fresh (never received) heads so far. The walk stops at the row that
-- finds the ($4 + 1)-th fresh head (the window's run condition on `found`): the $4
-- groups a receive serves at most became available no later than the $4-th fresh head
-- (a message sent later becomes available later: sent plus the queue's delay, or at the
-- end of a lease that began after that). At most 512 messages are read: a queue whose
-- groups are mostly in flight is messages behind their heads to its end (unbounded, the
-- walk read the whole queue: 25 ms a claim of 10 on a queue of 5,000 messages in 100
-- groups, 95 of them in flight).
heads AS MATERIALIZED (
    SELECT w.* FROM (
        SELECT c.group_id, c.seq, c.visible_at, c.head,
               count(*) FILTER (WHERE c.head AND c.fresh) OVER (ORDER BY c.seq) AS found
        FROM (
            SELECT m.seq, m.group_id, m.visible_at, m.receive_count = 0 AS fresh,
                   NOT EXISTS (
                       SELECT 1 FROM messages o
                       WHERE o.queue_id = m.queue_id AND o.group_id = m.group_id
                         AND o.seq < m.seq AND o.sent_at + 0 > (SELECT horizon FROM q)
                         AND o.id <> ALL($6::text[])) AS head
            FROM messages m
            WHERE $4::int8 > 0 AND m.queue_id = (SELECT id FROM q)
              -- one CASE, which the planner cannot estimate (it guesses half the
              -- messages pass): its estimates of the separate tests multiplied to a
              -- handful of rows, and it sorted the whole queue instead of walking it in
              -- order and stopping early
              AND CASE WHEN m.group_id IS NOT NULL
                            AND m.visible_at <= (SELECT now FROM q)
                            AND m.sent_at + 0 > (SELECT horizon FROM q)
                            AND m.id <> ALL($6::text[])
                       THEN true ELSE false END
            ORDER BY m.seq LIMIT 512
        ) c
    ) w
    WHERE w.found <= $4
    -- (no limit in effect: a limit the planner cannot read makes it plan for few rows,
    -- an ordered walk; without one it sorted the queue's messages)
    LIMIT 512 + $4
),
-- whether the walk found every head it needs: its $4 fresh heads, or the end of the
-- queue before 512 messages
walked AS MATERIALIZED (
    SELECT count(*) FILTER (WHERE head AND found = $4) > 0 OR count(*) < 512 AS complete
    FROM heads
),
-- the groups a receive serves, as in receive_fifo_messages; none when the walk fell short
served AS MATERIALIZED (
    SELECT h.group_id, h.seq, h.visible_at,
           row_number() OVER (ORDER BY h.visible_at, h.seq) AS rank
    FROM heads h
    WHERE h.head AND (SELECT complete FROM walked)
    ORDER BY h.visible_at, h.seq
    LIMIT $4
),

-- name: receive_fifo_walk
-- Claim a FIFO queue of many groups: receive_fifo_messages (its parameters, its rows)
-- but for how it finds the groups' heads, walking the queue in send order instead of
-- probing every group, and for `many_groups`, which says here whether the walk found
-- every head it needs. When it did not (the queue's first messages are mostly of groups
-- in flight) it claims nothing, and the store claims with receive_fifo_messages instead
-- (store/postgres/fifo.py). Probing each of 65 groups was half of a claim; a
-- separate statement, not a branch of one: each execution starts every node of its
-- plan, and the one statement's 131 nodes were a third of its CPU.
-- include: claim_opening
-- include: fifo_walk
-- include: fifo_runs
-- include: fifo_locks
-- include: claim_deliveries
    RETURNING m.*, m.ctid::text AS address, p.place
)
SELECT (SELECT id FROM q) IS NOT NULL AS queue_found, (SELECT count(*) FROM moved) AS moved,
       (SELECT complete FROM walked) AS many_groups,
       (SELECT $7::int4 FROM turn) AS turn_place, c.*
FROM (SELECT 1) AS one
LEFT JOIN claimed c ON true
ORDER BY c.place;

-- name: receive_fifo_turn
-- Claim a FIFO queue of many groups for a whole turn of receives in one execution:
-- receive_fifo_walk (its walk, its facts) but for how the served groups are dealt out.
-- $1 account, $2 queue name, $3 now, $4 the turn's receives (how many groups to serve),
-- $5 the lease (seconds), $6 ids claimed already (none: '{}'), $7 the receives' limits
-- (int4[], in turn order), $8 the queue's receive lock to take or NULL. Receive j gets the
-- j-th served group's run alone, cut at its limit: a group never goes to two receives
-- (two receivers would hold one group in flight), and each receive takes the group a
-- claim of its own after those before it would have served first. A receive whose group's
-- run is shorter than its limit gets fewer messages than such a claim would have given
-- (it would have gone on to the next groups): AWS allows fewer. One execution instead of
-- one a receive: a claim's executor start-up was nearly half of its CPU
-- (store/postgres/fifo.py). Its rows: at least one a receive, with its place in the turn
-- (`turn_place`, 1 to $4; 0 for the turn's first statement, $4 = 0, which claims nothing
-- and takes the lock), the deliveries of each receive in its group's order, and the
-- queue's facts; `moved` counts the messages of the receive's group moved to the
-- dead-letter queue.
-- include: claim_opening
-- include: fifo_walk
-- each served group's deliverable run, cut at the limit of the receive it goes to (its
-- rank): `turn_place`
chosen AS MATERIALIZED (
    SELECT x.id, x.seq, x.group_id, x.ctid, x.place, h.rank AS turn_place
    FROM served h
-- include: fifo_group_run
        LIMIT ($7::int4[])[h.rank::int4]
    ) x
    WHERE x.deliverable
),
-- include: fifo_locks
-- include: claim_deliveries
    RETURNING m.*, m.ctid::text AS address, p.place
)
SELECT (SELECT id FROM q) IS NOT NULL AS queue_found,
       (SELECT count(*) FROM moved v JOIN chosen e ON e.id = v.id
        WHERE e.turn_place = r.turn_place) AS moved,
       (SELECT complete FROM walked) AS many_groups,
       (SELECT r.turn_place FROM turn) AS turn_place, c.*
FROM generate_series(least($4::int4, 1), $4::int4) AS r (turn_place)
LEFT JOIN claimed c
    ON c.group_id = (SELECT s.group_id FROM served s WHERE s.rank = r.turn_place)
ORDER BY r.turn_place, c.place;

-- name: receive_fair_messages
-- Claim receivable messages with fair-queue priority. $1 account, $2 queue name, $3 now,
-- $4 at most how many,
-- $5 the lease (seconds), $6 ids this receive claimed already (as receive_messages),
-- $7 the in-flight count that makes a tenant a candidate, $8 the noisy share.
-- receive_messages for a standard queue holding messages with group ids (fair queues,
-- core/fairness.py): the same statement but for how it picks (the rest is the claims'
-- shared fragments).
-- include: claim_opening
-- fair queues: the in-flight messages of each tenant (group id) holding at least $7 of
-- them, found through messages_queue_group. (No retention filter here: an in-flight
-- message past retention counts until the sweeper takes it.)
tenants AS (
    SELECT m.group_id, count(*) AS in_flight FROM messages m
    WHERE m.queue_id = (SELECT id FROM q) AND m.group_id IS NOT NULL
      AND m.receive_count > 0 AND m.visible_at - m.retry_delay > (SELECT now FROM q)
    GROUP BY m.group_id
    HAVING count(*) >= $7::int8
),
-- the noisy tenants: those also holding more than the share $8 of all the queue's
-- in-flight messages (counted only when a tenant holds $7)
noisy AS (
    SELECT group_id, in_flight FROM tenants
    WHERE in_flight > $8::float8 * (
        SELECT count(*) FROM messages m
        WHERE m.queue_id = (SELECT id FROM q)
          AND m.receive_count > 0 AND m.visible_at - m.retry_delay > (SELECT now FROM q)
          AND m.sent_at + 0 > (SELECT horizon FROM q)
    )
),
-- while a tenant is noisy: the quiet tenants' receivable messages first, oldest first,
-- then the noisy tenants', the fewest in flight first (this sorts the queue's
-- receivable messages, so it runs only while a tenant is noisy)
fair AS (
    SELECT m.queue_id, m.id, m.seq, m.receive_count, m.carried_receive_count, m.ctid,
           coalesce(n.in_flight, 0) AS noisy_rank
    FROM messages m
    LEFT JOIN noisy n ON n.group_id = m.group_id
    WHERE EXISTS (SELECT 1 FROM noisy)
      AND m.queue_id = (SELECT id FROM q)
      AND m.visible_at <= (SELECT now FROM q)
      AND m.sent_at + 0 > (SELECT horizon FROM q)
      AND m.id <> ALL($6::text[])
    ORDER BY coalesce(n.in_flight, 0), m.seq
    LIMIT $4
    FOR UPDATE OF m SKIP LOCKED
),
-- otherwise the oldest receivable messages, as receive_messages picks them ($6: the
-- messages this receive claimed already, as in receive_messages)
oldest AS (
    SELECT m.queue_id, m.id, m.seq, m.receive_count, m.carried_receive_count, m.ctid,
           0::int8 AS noisy_rank
    FROM messages m
    WHERE NOT EXISTS (SELECT 1 FROM noisy)
      AND m.queue_id = (SELECT id FROM q)
      AND m.visible_at <= (SELECT now FROM q)
      AND m.sent_at + 0 > (SELECT horizon FROM q)
      AND m.id <> ALL($6::text[])
    ORDER BY m.seq
    LIMIT $4
    FOR UPDATE OF m SKIP LOCKED
),
-- the messages this receive claims (one of the two is empty)
picked AS (
    SELECT * FROM oldest UNION ALL SELECT * FROM fair
),
-- include: claim_deliveries
    RETURNING m.*, m.ctid::text AS address, p.noisy_rank
)
SELECT (SELECT id FROM q) IS NOT NULL AS queue_found, (SELECT count(*) FROM moved) AS moved,
       -- whether the queue still holds messages with group ids (one probe of
       -- messages_queue_group): when not, the store goes back to receive_messages
       EXISTS (
           SELECT 1 FROM messages g
           WHERE g.queue_id = (SELECT id FROM q) AND g.group_id IS NOT NULL
       ) AS grouped,
       c.*
FROM (SELECT 1) AS one
LEFT JOIN claimed c ON true
ORDER BY c.noisy_rank, c.seq;

-- name: delete_messages
-- Delete the messages whose current delivery the receipts name. $1 account, $2 queue
-- name, $3 now,
-- $4 message ids, $5 tokens (their text joined by ','), $6 refuse receipts whose lease
-- ran out, $7 where each delivery's row was when its claim wrote it (the claims'
-- address, a ctid's text; joined by ';', empty where the store has no such hint). A
-- row per receipt. Tokens and addresses come as text, not arrays: asyncpg checks every
-- element of an array parameter against abstract base classes, 0.36-0.42 us a token and
-- 0.76 an address of hopper's CPU, against 0.20-0.26 as text, for 0.03-0.06 us more of
-- the backend's (ids as a text[]'s text cost the backend as much as they saved hopper:
-- bench/README.md, branch pgdrain5).
WITH q AS (
    SELECT id, t.now,
           t.now - (config ->> 'message_retention_period')::float8 AS horizon
    FROM queues,
         (SELECT coalesce($3::float8, extract(epoch FROM statement_timestamp())::float8) AS now) t
    WHERE account = $1 AND name = $2
),
-- the receipts, numbered in request order
r AS (
    SELECT * FROM unnest($4::text[], string_to_array($5::text, ',')::int8[],
                         string_to_array($7::text, ';', '')::tid[])
        WITH ORDINALITY AS r (id, token, address, ord)
),
-- the messages whose current delivery the receipt names (and, when $6, whose lease
-- has not run out), found at the address the claim left them (a Tid Scan): the
-- primary-key probe a receipt was a third of a delete's database CPU. The guards are
-- the same as by_key's, so a row found there that is not the receipt's delivery (its
-- message changed since the claim: a visibility change writes a new version) is left
-- alone, and by_key looks for the receipt by its message id.
by_address AS (
    DELETE FROM messages m USING r
    WHERE m.ctid = r.address AND m.queue_id = (SELECT id FROM q) AND m.id = r.id
      AND m.token = r.token AND m.token > 0
      AND m.sent_at + 0 > (SELECT horizon FROM q)
      AND NOT ($6::boolean AND m.visible_at - m.retry_delay <= (SELECT now FROM q))
    RETURNING m.id, m.token
),
-- the same by the primary key, for the receipts by_address did not delete (a hashed
-- subplan: a probe only for those)
by_key AS (
    DELETE FROM messages m USING r
    WHERE r.id NOT IN (SELECT a.id FROM by_address a)
      AND m.queue_id = (SELECT id FROM q) AND m.id = r.id
      AND m.token = r.token AND m.token > 0
      AND m.sent_at + 0 > (SELECT horizon FROM q)
      AND NOT ($6::boolean AND m.visible_at - m.retry_delay <= (SELECT now FROM q))
    RETURNING m.id, m.token
),
-- what the two deleted (a message at most once: by_key leaves out what by_address took)
deleted AS (
    SELECT id, token FROM by_address UNION ALL SELECT id, token FROM by_key
)
SELECT r.ord, (SELECT id FROM q) AS queue_id,
       d.id IS NOT NULL AS done,
       m.token AS current_token,
       m.visible_at - m.retry_delay <= (SELECT now FROM q) AS lapsed
FROM r
LEFT JOIN deleted d ON d.id = r.id AND d.token = r.token
-- each message this statement did not delete, as it was before it (the facts for the
-- classification); a deleted one needs none, so the common case reads no row twice
LEFT JOIN LATERAL (
    SELECT m.token, m.visible_at, m.retry_delay FROM messages m
    WHERE d.id IS NULL
      AND m.queue_id = (SELECT id FROM q) AND m.id = r.id
      AND m.sent_at + 0 > (SELECT horizon FROM q)
    -- (one row at most; the LIMIT keeps the look-up a probe per receipt instead of a
    -- join the planner may turn into a read of the queue)
    LIMIT 1
) m ON true
ORDER BY r.ord;

-- name: change_visibility
-- Set new lease deadlines for the receipts' messages. $1 account, $2 queue name, $3 now,
-- $4 message ids,
-- $5 tokens, $6 refuse receipts whose lease ran out (as delete_messages), $7 the
-- timeouts (seconds), $8 below, $9 the errors to keep as last_error (NULL: unchanged).
-- A row per receipt.
WITH q AS (
    SELECT id, t.now,
           t.now - (config ->> 'message_retention_period')::float8 AS horizon
    FROM queues,
         (SELECT coalesce($3::float8, extract(epoch FROM statement_timestamp())::float8) AS now) t
    WHERE account = $1 AND name = $2
),
-- the changes, numbered in request order
r AS (
    SELECT * FROM unnest($4::text[], $5::int8[], $7::float8[], $9::text[])
        WITH ORDINALITY AS r (id, token, timeout, error, ord)
),
-- the leases the receipts still hold get their new deadline; token and count stay
changed AS (
    -- the retry delay still follows the lease's end
    UPDATE messages m SET visible_at = (SELECT now FROM q) + r.timeout + m.retry_delay,
                          last_error = coalesce(r.error, m.last_error)
    -- a receipt repeated in the batch: the last change wins, as if applied in order
    FROM (SELECT DISTINCT ON (id, token) * FROM r ORDER BY id, token, ord DESC) r
    WHERE m.queue_id = (SELECT id FROM q) AND m.id = r.id
      AND m.token = r.token AND m.token > 0
      AND m.sent_at + 0 > (SELECT horizon FROM q)
      AND NOT ($6::boolean AND m.visible_at - m.retry_delay <= (SELECT now FROM q))
      -- $8: the longest a lease may reach after its delivery's receive, or NULL
      AND NOT coalesce((SELECT now FROM q) + r.timeout - m.received_at > $8::float8, false)
    RETURNING m.id, m.token
)
SELECT r.ord, (SELECT id FROM q) AS queue_id,
       (r.id, r.token) IN (SELECT id, token FROM changed) AS done,
       m.token AS current_token,
       m.visible_at - m.retry_delay <= (SELECT now FROM q) AS lapsed,
       coalesce((SELECT now FROM q) + r.timeout - m.received_at > $8::float8, false) AS beyond
FROM r
-- each message as it was before this statement (the facts for the classification)
LEFT JOIN messages m
    ON m.queue_id = (SELECT id FROM q) AND m.id = r.id
    AND m.sent_at + 0 > (SELECT horizon FROM q)
ORDER BY r.ord;

-- name: current_tokens
-- Messages' current tokens. $1 account, $2 queue name, $3 message ids.
-- The rare second look when a receipt lost a race (its message changed under us).
SELECT m.id, m.token FROM messages m JOIN queues q ON q.id = m.queue_id
WHERE q.account = $1 AND q.name = $2 AND m.id = ANY($3::text[]);

-- name: purge
-- Delete all of a queue's messages, recording when; how many. $1 account, $2 queue name,
-- $3 now.
WITH q AS (
    UPDATE queues SET last_purged_at = coalesce($3::float8, extract(epoch FROM statement_timestamp())::float8)
    WHERE account = $1 AND name = $2
    RETURNING id
),
-- every message of the queue
gone AS (
    DELETE FROM messages WHERE queue_id = (SELECT id FROM q) RETURNING 1
),
-- AWS: a FIFO queue's deduplication window goes with its messages
forgotten AS (
    DELETE FROM fifo_dedup WHERE queue_id = (SELECT id FROM q)
)
SELECT (SELECT id FROM q) AS queue_id, (SELECT count(*) FROM gone) AS purged;

-- name: last_purged_at
-- When a queue was last purged. $1 account, $2 queue name.
SELECT last_purged_at FROM queues WHERE account = $1 AND name = $2;

-- name: stats
-- A queue's counts of visible, in-flight and delayed messages, and ages. $1 account, $2
-- queue name, $3 now.
WITH q AS (
    SELECT id, t.now,
           t.now - (config ->> 'message_retention_period')::float8 AS horizon
    FROM queues,
         (SELECT coalesce($3::float8, extract(epoch FROM statement_timestamp())::float8) AS now) t
    WHERE account = $1 AND name = $2
)
SELECT (SELECT id FROM q) AS queue_id,
       count(*) FILTER (WHERE m.visible_at <= (SELECT now FROM q)) AS visible,
       count(*) FILTER (WHERE m.receive_count > 0
                          AND m.visible_at - m.retry_delay > (SELECT now FROM q)) AS in_flight,
       -- delayed by a send's delay, or by a retry policy's backoff after a lease
       count(*) FILTER (WHERE m.visible_at > (SELECT now FROM q)
                          AND (m.receive_count = 0
                               OR m.visible_at - m.retry_delay <= (SELECT now FROM q)))
           AS delayed,
       min(m.sent_at) AS oldest_sent_at,
       min(m.sent_at) FILTER (WHERE m.visible_at <= (SELECT now FROM q)) AS oldest_visible_sent_at,
       count(*) FILTER (WHERE m.receive_count > 1) AS redelivered,
       coalesce(sum(m.receive_count - 1) FILTER (WHERE m.receive_count > 1), 0) AS redeliveries
FROM messages m
WHERE m.queue_id = (SELECT id FROM q) AND m.sent_at > (SELECT horizon FROM q);

-- name: count_in_flight
-- How many unexpired messages of a queue are in flight, for the in-flight limit. $1
-- account, $2 queue name, $3 now.
-- Keyed by the queue alone (no range on the send time), so the pool's generic plan reads
-- the queue's rows through messages_queue_order whatever the queue's size.
WITH q AS (
    SELECT id, t.now,
           t.now - (config ->> 'message_retention_period')::float8 AS horizon
    FROM queues,
         (SELECT coalesce($3::float8, extract(epoch FROM statement_timestamp())::float8) AS now) t
    WHERE account = $1 AND name = $2
)
SELECT (SELECT id FROM q) AS queue_id, count(*) AS in_flight
FROM messages m
WHERE m.queue_id = (SELECT id FROM q)
  AND m.receive_count > 0
  AND m.visible_at - m.retry_delay > (SELECT now FROM q)
  AND m.sent_at > (SELECT horizon FROM q);

-- name: next_visible_at
-- The earliest lease or delay of a queue to run out after now. $1 account, $2 queue name,
-- $3 now.
WITH q AS (
    SELECT id, t.now,
           t.now - (config ->> 'message_retention_period')::float8 AS horizon
    FROM queues,
         (SELECT coalesce($3::float8, extract(epoch FROM statement_timestamp())::float8) AS now) t
    WHERE account = $1 AND name = $2
)
SELECT (SELECT id FROM q) AS queue_id, min(m.visible_at) AS next_visible_at
FROM messages m
WHERE m.queue_id = (SELECT id FROM q)
  AND m.visible_at > (SELECT now FROM q)
  AND m.sent_at > (SELECT horizon FROM q);

-- name: peek_messages
-- The oldest messages of a queue, unchanged. $1 account, $2 queue name, $3 now, $4 at
-- most how many.
-- An operator's look at the head of a queue (the dashboard): a plain read, no lock and
-- no write, so receive counts, tokens and leases stay as they were.
WITH q AS (
    SELECT id,
           coalesce($3::float8, extract(epoch FROM statement_timestamp())::float8)
               - (config ->> 'message_retention_period')::float8 AS horizon
    FROM queues
    WHERE account = $1 AND name = $2
)
SELECT (SELECT id FROM q) AS found_queue_id, m.*
FROM (SELECT 1) AS one
LEFT JOIN LATERAL (
    SELECT * FROM messages m
    WHERE m.queue_id = (SELECT id FROM q) AND m.sent_at + 0 > (SELECT horizon FROM q)
    ORDER BY m.seq
    LIMIT $4
) m ON true
ORDER BY m.seq;

-- name: discard_message
-- Delete one message whatever its state, no receipt needed (an operator's removal).
-- $1 account, $2 queue name, $3 now, $4 the message id.
WITH q AS (
    SELECT id,
           coalesce($3::float8, extract(epoch FROM statement_timestamp())::float8)
               - (config ->> 'message_retention_period')::float8 AS horizon
    FROM queues
    WHERE account = $1 AND name = $2
),
-- the message, if it is this queue's and not past retention
gone AS (
    DELETE FROM messages m
    WHERE m.queue_id = (SELECT id FROM q) AND m.id = $4
      AND m.sent_at + 0 > (SELECT horizon FROM q)
    RETURNING 1
)
SELECT (SELECT id FROM q) AS queue_id, (SELECT count(*) FROM gone) AS discarded;

-- name: accounts
-- The accounts owning a queue, in byte order.
SELECT account FROM queues GROUP BY account ORDER BY account COLLATE "C";

-- name: queue_keys
-- Every queue's account and name.
SELECT account, name FROM queues;

-- name: notify
-- Send wake-up notifications. $1 the channel, $2 the payloads.
SELECT pg_notify($1, payload) FROM unnest($2::text[]) AS payload;

-- name: search_path
-- The session's search_path (hopper.enqueue restores it after its send).
SELECT current_setting('search_path');

-- name: set_search_path
-- $1: the search_path for the rest of the current transaction (hopper.enqueue points
-- it at hopper's schema, whose statements name none).
SELECT set_config('search_path', $1, true);

-- name: set_send_rules
-- Write the rules the SQL function send_message() reads (migration 0080), as
-- hopper/enqueue/rules.py takes them from the code that states them. $1 the forbidden
-- characters (a regular expression), $2 the longest delay, $3 the deduplication window,
-- $4 send_messages, $5 send_plain_messages, $6 the notification channel, $7 the wake-up
-- payload, $8..$14 the error texts: queue missing, FIFO refused, body missing, body
-- forbidden, too long, delay invalid, queue full.
INSERT INTO send_rules AS r (forbidden, max_delay, deduplication_window, send_statement,
                             plain_send_statement, channel, wakeup, queue_missing,
                             fifo_refused, body_missing, body_forbidden, too_long,
                             delay_invalid, queue_full)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
ON CONFLICT (one) DO UPDATE
    SET forbidden = excluded.forbidden, max_delay = excluded.max_delay,
        deduplication_window = excluded.deduplication_window,
        send_statement = excluded.send_statement,
        plain_send_statement = excluded.plain_send_statement, channel = excluded.channel,
        wakeup = excluded.wakeup, queue_missing = excluded.queue_missing,
        fifo_refused = excluded.fifo_refused, body_missing = excluded.body_missing,
        body_forbidden = excluded.body_forbidden, too_long = excluded.too_long,
        delay_invalid = excluded.delay_invalid, queue_full = excluded.queue_full;

-- name: sweep_expired
-- Delete messages past their queue's retention; how many. $1 now, $2 at most how many.
WITH t AS (SELECT coalesce($1::float8, extract(epoch FROM statement_timestamp())::float8) AS now),
-- per queue, its messages past retention, oldest first (messages_queue_sent), bounded
doomed AS (
    SELECT e.queue_id, e.id
    FROM queues q CROSS JOIN t
    CROSS JOIN LATERAL (
        SELECT m.queue_id, m.id FROM messages m
        WHERE m.queue_id = q.id
          AND m.sent_at <= t.now - (q.config ->> 'message_retention_period')::float8
        ORDER BY m.sent_at
        LIMIT $2
    ) e
    LIMIT $2
),
-- deleted unless a receive holds the row right now (the next sweep gets it)
gone AS (
    DELETE FROM messages m
    WHERE (m.queue_id, m.id) IN (
        SELECT d.queue_id, d.id FROM doomed d
        JOIN messages l ON l.queue_id = d.queue_id AND l.id = d.id
        FOR UPDATE OF l SKIP LOCKED
    )
    RETURNING 1
)
SELECT count(*) AS swept FROM gone;

-- name: sweep_orphans
-- Delete messages and deduplication ids of deleted queues. $1 at most how many of each.
-- Rows under a queue id no queue has: sends that committed after their queue's
-- DeleteQueue (migrations 0070 and 0090). The queue ids present are read by skipping
-- through messages_queue_order and fifo_dedup_pkey (one probe per queue, not a scan of
-- the table); at most $1 rows of each table. Its count: the messages.
WITH RECURSIVE present AS (
    (SELECT queue_id FROM messages ORDER BY queue_id LIMIT 1)
    UNION ALL
    SELECT (SELECT m.queue_id FROM messages m WHERE m.queue_id > p.queue_id
            ORDER BY m.queue_id LIMIT 1)
    FROM present p WHERE p.queue_id IS NOT NULL
),
-- the same for the queues holding deduplication ids
windowed AS (
    (SELECT queue_id FROM fifo_dedup ORDER BY queue_id LIMIT 1)
    UNION ALL
    SELECT (SELECT f.queue_id FROM fifo_dedup f WHERE f.queue_id > w.queue_id
            ORDER BY f.queue_id LIMIT 1)
    FROM windowed w WHERE w.queue_id IS NOT NULL
),
gone AS (
    DELETE FROM messages m
    WHERE (m.queue_id, m.id) IN (
        SELECT o.queue_id, o.id FROM messages o
        WHERE o.queue_id IN (
            SELECT p.queue_id FROM present p
            WHERE p.queue_id IS NOT NULL
              AND NOT EXISTS (SELECT 1 FROM queues q WHERE q.id = p.queue_id)
        )
        LIMIT $1
    )
    RETURNING 1
),
-- deduplication ids of deleted queues
forgotten AS (
    DELETE FROM fifo_dedup f
    WHERE (f.queue_id, f.dedup_id) IN (
        SELECT o.queue_id, o.dedup_id FROM fifo_dedup o
        WHERE o.queue_id IN (
            SELECT w.queue_id FROM windowed w
            WHERE w.queue_id IS NOT NULL
              AND NOT EXISTS (SELECT 1 FROM queues q WHERE q.id = w.queue_id)
        )
        LIMIT $1
    )
)
SELECT count(*) AS swept FROM gone;

-- name: move_messages
-- Move receivable messages to another queue. $1 account, $2 queue name of the source, $3
-- now, $4, $5
-- below, $6 at most how many.
-- $4/$5: the destination, or NULLs for "back to each message's dead-letter source".
WITH t AS (SELECT coalesce($3::float8, extract(epoch FROM statement_timestamp())::float8) AS now),
-- the source queue, with its retention horizon
src AS (
    SELECT s.id, t.now, t.now - (s.config ->> 'message_retention_period')::float8 AS horizon,
           (s.config ->> 'fifo')::boolean AS fifo
    FROM queues s CROSS JOIN t
    WHERE s.account = $1 AND s.name = $2
),
-- the named destination (no row when none is named or it does not exist)
dst AS (
    SELECT id FROM queues WHERE account = $4 AND name = $5
),
-- the oldest receivable messages with somewhere to go, locked
picked AS (
    SELECT m.queue_id, m.id, m.seq, coalesce((SELECT id FROM dst), o.id) AS target
    FROM messages m
    LEFT JOIN queues o
        ON $4::text IS NULL
        AND o.account = m.dead_letter_source_account AND o.name = m.dead_letter_source_name
    WHERE m.queue_id = (SELECT id FROM src)
      AND m.visible_at <= (SELECT now FROM src)
      AND m.sent_at + 0 > (SELECT horizon FROM src)
      AND coalesce((SELECT id FROM dst), o.id) IS NOT NULL
      AND (NOT (SELECT fifo FROM src) OR NOT EXISTS (
        -- FIFO: what a receive could claim (its group's run: no earlier message of
        -- its group in flight or delayed), so each group moves in order
        SELECT 1 FROM messages g
        WHERE g.queue_id = m.queue_id AND g.group_id = m.group_id
          AND g.visible_at > (SELECT now FROM src)
          AND g.sent_at + 0 > (SELECT horizon FROM src)
          AND g.seq < m.seq
      ))
    ORDER BY m.seq
    LIMIT $6
    FOR UPDATE OF m SKIP LOCKED
),
-- the send turn (fragment fifo_send_turn) of each FIFO destination the move takes
-- messages to, before they draw their places there: moves commit in the order of their
-- places, as sends do (else a receive there could claim a moved message while a send of
-- its group, earlier in send order and not yet committed, was not yet there). None
-- when no destination is FIFO. In the order of the queues' ids (the sort comes before
-- the volatile select list), as any statement taking several turns must, so that two
-- moves never wait for each other. The move holds a FIFO source's receive lock
-- already (PostgresQueueStore.move_messages), as a claim that dead-letters does
-- (fragment claim_deliveries: why that order closes no cycle). A caller's transaction
-- that sends to several FIFO queues (hopper.enqueue) takes their turns in its own order,
-- and may deadlock with a move as with another such transaction: PostgreSQL's
-- deadlock detection ends one of them.
turns AS MATERIALIZED (
    SELECT pg_advisory_xact_lock(hashtext(current_schema()), hashint8(d.id))
    FROM queues d
    WHERE d.id IN (SELECT p.target FROM picked p) AND (d.config ->> 'fifo')::boolean
    ORDER BY d.id
),
-- their places in the destinations' send order, drawn after sorting: they arrive in the
-- order they had here (a FIFO queue keeps each group's order); once `turns` is taken
placed AS (
    SELECT p.queue_id, p.id, p.target, nextval('message_order') AS seq FROM picked p
    WHERE (SELECT count(*) FROM turns) >= 0
    ORDER BY p.seq
),
-- each arrives as a fresh delivery candidate at its destination
moved AS (
    UPDATE messages m
    SET queue_id = p.target, seq = p.seq, visible_at = (SELECT now FROM src), retry_delay = 0,
        receive_count = 0, carried_receive_count = 0, token = 0, first_received_at = NULL,
        live_key = NULL, dead_letter_source_account = NULL, dead_letter_source_name = NULL
    FROM placed p
    WHERE m.queue_id = p.queue_id AND m.id = p.id
    RETURNING 1
)
SELECT (SELECT id FROM src) AS queue_id,
       $4::text IS NULL OR EXISTS (SELECT 1 FROM dst) AS destination_found,
       (SELECT count(*) FROM moved) AS moved;

-- name: create_move_task
-- Record a move task. $1 id, $2/$3 source account and name, $4/$5 destination (or
-- NULLs), $6 rate, $7 status, $8 started at, $9 to move, $10 moved, $11 failure
-- reason, $12 lease deadline.
-- Nothing is inserted when the source has an active task (move_tasks_one_active).
INSERT INTO move_tasks (id, source_account, source_name, destination_account,
                        destination_name, max_per_second, status, started_at, to_move,
                        moved, failure_reason, lease_until)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
ON CONFLICT DO NOTHING
RETURNING id;

-- name: get_move_task
-- A move task. $1 its id.
SELECT * FROM move_tasks WHERE id = $1;

-- name: list_move_tasks
-- A source's move tasks, latest first. $1 account, $2 name of the source, $3 at most
-- how many.
SELECT * FROM move_tasks
WHERE source_account = $1 AND source_name = $2
ORDER BY started_at DESC, seq DESC
LIMIT $3;

-- name: cancel_move_task
-- Cancel a RUNNING move task. $1 its id.
-- The task's row either way; only a RUNNING one changes.
WITH changed AS (
    UPDATE move_tasks SET status = 'CANCELLING'
    WHERE id = $1 AND status = 'RUNNING'
    RETURNING *
)
SELECT * FROM changed
UNION ALL
SELECT * FROM move_tasks WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM changed);

-- name: advance_move_task
-- A move-task runner's report. $1 task id, $2 messages moved, $3 the renewed lease.
-- $4/$5: the status (and failure reason) to finish a RUNNING task with, or NULL.
WITH changed AS (
    UPDATE move_tasks
    SET moved = moved + $2,
        lease_until = $3,
        status = CASE WHEN status = 'CANCELLING' THEN 'CANCELLED' ELSE coalesce($4, status) END,
        failure_reason = CASE WHEN status = 'RUNNING' AND $4 IS NOT NULL THEN $5
                              ELSE failure_reason END
    WHERE id = $1 AND status IN ('RUNNING', 'CANCELLING')
    RETURNING *
)
SELECT * FROM changed
UNION ALL
SELECT * FROM move_tasks WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM changed);

-- name: claim_move_tasks
-- Take over active move tasks whose lease ran out. $1 the new lease deadline, $2 now.
UPDATE move_tasks SET lease_until = $1
WHERE id IN (
    SELECT id FROM move_tasks
    WHERE status IN ('RUNNING', 'CANCELLING')
      AND lease_until <= coalesce($2::float8, extract(epoch FROM statement_timestamp())::float8)
    FOR UPDATE SKIP LOCKED
)
RETURNING *;

-- name: vacuum_messages
-- The dead index entries deletes leave at the head of every queue go (store/postgres/vacuum.py).
-- INDEX_CLEANUP ON: they sit in few heap pages, and AUTO skips the indexes below 2%.
VACUUM (SKIP_LOCKED, INDEX_CLEANUP ON) messages;

-- name: messages_rows
-- The planner's estimate of the messages table's rows (store/postgres/vacuum.py).
SELECT greatest(reltuples, 0)::float8 FROM pg_class WHERE oid = 'messages'::regclass;

-- name: take_dispatch_slot
-- A dispatch slot for a holder. $1 account, $2 queue name, $3 now, $4 holder, $5 how
-- many slots, $6 the lease (seconds). One row (the slot) or none (all held).
WITH t AS (SELECT coalesce($3::float8, extract(epoch FROM statement_timestamp())::float8) AS now),
-- the slot the holder holds already, else the lowest free one (never taken, or its
-- lease run out)
wanted AS (
    SELECT s.slot FROM generate_series(0, $5::int - 1) AS s (slot)
    LEFT JOIN dispatch_slots d ON d.account = $1 AND d.name = $2 AND d.slot = s.slot
    WHERE d.slot IS NULL OR d.holder = $4 OR d.until <= (SELECT now FROM t)
    ORDER BY d.holder = $4 DESC NULLS LAST, s.slot
    LIMIT 1
)
-- taken or renewed; a concurrent taker of the same slot that committed first keeps it
-- (the guard sees its fresh lease), and this statement returns no row
INSERT INTO dispatch_slots AS d (account, name, slot, holder, until)
SELECT $1, $2, w.slot, $4, t.now + $6::float8 FROM wanted w CROSS JOIN t
ON CONFLICT (account, name, slot) DO UPDATE
    SET holder = excluded.holder, until = excluded.until
    WHERE d.holder = excluded.holder OR d.until <= (SELECT now FROM t)
RETURNING d.slot;

-- name: give_back_dispatch_slot
-- Free a dispatch slot its holder holds. $1 account, $2 queue name, $3 holder, $4 slot.
DELETE FROM dispatch_slots WHERE account = $1 AND name = $2 AND slot = $4 AND holder = $3;
