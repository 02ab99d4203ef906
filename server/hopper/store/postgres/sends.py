"""The Postgres store's sends: the routes (`Sender`: which statement a send runs, and
whether it shares it with concurrent sends), the statements' parameters, and their rows
as the core's `SendResult`s.

Routes: a send with keys to take (FIFO deduplication ids, live keys) or a depth ceiling
to count shares a statement with the concurrent sends of its queue; a send with neither
shares one with the concurrent plain sends of every queue (coalesce.py); a store on the
caller's connection (hopper.enqueue) shares nothing, its sends run in the caller's
transaction, one statement each.

A send without keys to take or count (a standard queue, no depth ceiling, no
deduplication id) runs the lean `send_plain_messages`; a send to a FIFO queue without
a depth ceiling the lean `send_fifo_messages`, which takes deduplication windows only;
every other runs `send_messages`, which takes deduplication ids and live keys and
counts the depth ceiling in the same statement. The plain sends shared across queues
(`send_plain_across`) run `send_plain_bare` when no message of the statement carries
more than an id and a body, `send_plain_across_leased` when one has a lease (the only
ones whose rows are needed), `send_plain_across` otherwise.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import TypeAlias, cast

import asyncpg

from hopper import jsoncodec
from hopper.core import limits
from hopper.core.errors import QueueNotFound
from hopper.core.model import NewMessage, QueueKey, SendResult
from hopper.store.postgres.coalesce import Coalescer, every
from hopper.store.postgres.pool import deadlock_retried, held_on
from hopper.store.postgres.rows import arrived_delivered, attributes_json
from hopper.store.postgres.schema import Connectable

Database: TypeAlias = Connectable | asyncpg.Pool

# What sends may share a statement on: the queue, the clock's reading, the depth ceiling.
SendGroup = tuple[QueueKey, float | None, int | None]
# A message to send and its queue, for the plain sends shared across queues.
PlainSend = tuple[QueueKey, NewMessage]
# What send_plain_bare's texts join ids and bodies with: a character SQS refuses in a
# body (core/characters.py); a send holding one all the same goes by JSON.
_SEPARATOR = "\x1f"


class Sender:
    def __init__(
        self, on: Callable[[], Database], sql: Mapping[str, str], *, coalesce: bool
    ) -> None:
        """`on()`: where a send runs (the pool, or the caller's connection)."""
        self._on = on
        self._sql = sql
        self._coalesce = coalesce
        # Keyed sends of a queue share statements, on a pool connection their drain
        # holds while the queue's rounds keep coming (regathered rounds follow one
        # another on it), as the plain sends: no acquire and release a statement.
        self._keyed: Coalescer[SendGroup, NewMessage, SendResult] = Coalescer(
            size=lambda message: len(message.body),
            hold=held_on(self._pool, self._send_group),
            regather=every,
        )
        # Plain sends of every queue share statements, keyed by `now` alone. Two in
        # flight, not one as deletes and claims: one at a time carries about twice the
        # sends a statement (each statement costs a commit, the backend's WAL flush
        # ~100 us of its CPU, and a round trip whatever its size), but a lone send
        # would wait behind another's commit, and a send is what end-to-end latency
        # waits for.
        self._plain: Coalescer[float | None, PlainSend, SendResult | None] = Coalescer(
            size=lambda item: len(item[1].body),
            parallel=2,
            hold=held_on(self._pool, self._send_plain_on),
            regather=every,
        )

    async def send(
        self,
        key: QueueKey,
        messages: Sequence[NewMessage],
        now: float | None,
        max_depth: int | None,
    ) -> list[SendResult]:
        """Enqueue `messages` by the route that fits them. Raises QueueNotFound."""
        if not self._coalesce or not messages:
            return await self._send_group(self._on(), (key, now, max_depth), list(messages))
        if keyed(key, messages) or max_depth is not None:
            # keys to take or a ceiling to count: concurrent sends of the queue share
            # a statement (see coalesce.py)
            return await self._keyed.submit((key, now, max_depth), messages)
        # Nothing to take or count: concurrent sends of any queues share one.
        plain = await self._plain.submit(now, [(key, m) for m in messages])
        return [found_result(result, key) for result in plain]

    async def close(self) -> None:
        """Wait for the statements already started (their callers are owed answers)."""
        await self._keyed.close()
        await self._plain.close()

    async def _send_plain_on(
        self, connection: Connectable, now: float | None, items: list[PlainSend]
    ) -> list[SendResult | None]:
        return await send_plain_across(connection, self._sql, now, items)

    def _pool(self) -> asyncpg.Pool:
        """The pool the shared plain sends hold a connection of (only a store with a
        pool of its own shares statements)."""
        db = self._on()
        if not isinstance(db, asyncpg.Pool):
            raise TypeError("shared sends need the store's pool")
        return db

    async def _send_group(
        self, db: Database, group: SendGroup, messages: list[NewMessage]
    ) -> list[SendResult]:
        """One statement for `messages`, one send's or several sends' that share it."""
        key, now, max_depth = group
        if not keyed(key, messages) or _no_repeats(messages):
            return await send_unique(db, self._sql, key, messages, now, max_depth)
        # One statement cannot take a key twice: a repeat is a duplicate of its first
        # use, as if sent just after it (FIFO deduplication ids, live keys on a standard
        # queue), in one send's batch as between the sends sharing a statement.
        unique, positions = first_uses(messages)
        results = await send_unique(db, self._sql, key, unique, now, max_depth)
        return [
            as_duplicate(results[index]) if repeat else results[index]
            for index, repeat in positions
        ]


async def send_unique(
    db: Database,
    sql: Mapping[str, str],
    key: QueueKey,
    messages: Sequence[NewMessage],
    now: float | None,
    max_depth: int | None,
) -> list[SendResult]:
    """Enqueue `messages`, which repeat no key, in one statement. Raises QueueNotFound."""
    # The common case (nothing to take, nothing to count) has a lean statement.
    plain = not key.is_fifo and max_depth is None
    if plain and messages and all(m.deduplication_id is None for m in messages):
        return await _send_plain(db, sql, key, messages, now)
    fifo = key.is_fifo and max_depth is None
    rows = await (
        _fetch_fifo(db, sql, key, messages, now)
        if fifo
        else _fetch_keyed(db, sql, key, messages, now, max_depth)
    )
    if not messages:
        if await db.fetchrow(sql["get_queue"], key.account, key.name) is None:
            raise QueueNotFound(key)
        return []
    if not rows or rows[0]["queue_id"] is None:
        raise QueueNotFound(key)
    # Mapped without a coroutine a row: only a duplicate whose holder the statement
    # could not see needs another look (a round trip).
    result_of = _fifo_row_result if fifo else _row_result
    results = [result_of(row, m) for row, m in zip(rows, messages, strict=True)]
    for index, result in enumerate(results):
        if result is None:
            results[index] = await _holder_result(db, sql, key, rows[index], messages[index])
    return cast(list[SendResult], results)


async def _fetch_keyed(
    db: Database,
    sql: Mapping[str, str],
    key: QueueKey,
    messages: Sequence[NewMessage],
    now: float | None,
    max_depth: int | None,
) -> list[asyncpg.Record]:
    """send_messages's rows: deduplication ids, live keys and the depth ceiling."""
    return await deadlock_retried(
        db,
        sql["send_messages"],
        key.account,
        key.name,
        now,
        [m.id for m in messages],
        [m.body for m in messages],
        [json.dumps(attributes_json(m.attributes)) for m in messages],
        [m.trace_header for m in messages],
        [float(m.delay) for m in messages],
        [m.group_id for m in messages],
        [m.deduplication_id for m in messages],
        float(limits.DEDUPLICATION_WINDOW_SECONDS),
        max_depth,
        [m.window_key for m in messages],
    )


async def _fetch_fifo(
    db: Database,
    sql: Mapping[str, str],
    key: QueueKey,
    messages: Sequence[NewMessage],
    now: float | None,
) -> list[asyncpg.Record]:
    """send_fifo_messages's rows (send_messages's work, for a FIFO queue without a
    ceiling)."""
    payload = [_fifo_entry(m) for m in messages]
    return await deadlock_retried(
        db,
        sql["send_fifo_messages"],
        key.account,
        key.name,
        now,
        jsoncodec.dumps(payload).decode(),
        float(limits.DEDUPLICATION_WINDOW_SECONDS),
    )


async def _send_plain(
    db: Database,
    sql: Mapping[str, str],
    key: QueueKey,
    messages: Sequence[NewMessage],
    now: float | None,
) -> list[SendResult]:
    payload = [_plain_entry(m) for m in messages]
    leased = any(m.lease is not None for m in messages)
    rows = await db.fetch(
        sql["send_plain_messages"],
        key.account,
        key.name,
        now,
        jsoncodec.dumps(payload).decode(),
    )
    if not rows:
        raise QueueNotFound(key)
    if not leased:
        return [SendResult(m.id) for m in messages]
    by_id = {row["id"]: row for row in rows}
    return [
        SendResult(m.id)
        if m.lease is None
        else SendResult(m.id, delivery=arrived_delivered(m, by_id[m.id]))
        for m in messages
    ]


async def send_plain_across(
    db: Database,
    sql: Mapping[str, str],
    now: float | None,
    items: Sequence[tuple[QueueKey, NewMessage]],
) -> list[SendResult | None]:
    """Enqueue messages without keys into their queues (no depth ceiling), however many
    queues, in one statement: each one's result, None where its queue does not exist."""
    places: dict[QueueKey, int] = {}
    numbers = [places.setdefault(key, len(places) + 1) for key, _ in items]
    accounts = [key.account for key in places]
    names = [key.name for key in places]
    if all(_bare(message) for _, message in items):
        ids = _SEPARATOR.join([message.id for _, message in items])
        bodies = _SEPARATOR.join([message.body for _, message in items])
        # Split back exactly: the separator nowhere else, no text empty (the server
        # splits an empty text into no element).
        separators = len(items) - 1
        if (
            ids
            and bodies
            and ids.count(_SEPARATOR) == separators
            and bodies.count(_SEPARATOR) == separators
        ):
            at = ",".join([str(number) for number in numbers])
            rows = await db.fetch(sql["send_plain_bare"], accounts, names, now, ids, bodies, at)
            return _found_results(items, numbers, len(places), rows)
    payload = []
    leased = False
    for (_, message), number in zip(items, numbers, strict=True):
        entry = _plain_entry(message)
        entry["q"] = number
        payload.append(entry)
        leased = leased or message.lease is not None
    text = jsoncodec.dumps(payload).decode()
    if leased:
        rows = await db.fetch(sql["send_plain_across_leased"], accounts, names, now, text)
        return _leased_results(items, {row["id"]: row for row in rows})
    rows = await db.fetch(sql["send_plain_across"], accounts, names, now, text)
    return _found_results(items, numbers, len(places), rows)


def _found_results(
    items: Sequence[tuple[QueueKey, NewMessage]],
    numbers: list[int],
    queues: int,
    rows: list[asyncpg.Record],
) -> list[SendResult | None]:
    """Without leases a message's result is its queue's: found (a row: its place among
    the `queues` of the statement), or not."""
    found = {row["place"] for row in rows}
    if len(found) == queues:
        return [SendResult(message.id) for _, message in items]
    return [
        SendResult(message.id) if number in found else None
        for (_, message), number in zip(items, numbers, strict=True)
    ]


def _bare(message: NewMessage) -> bool:
    """Whether a message is nothing but an id and a body (send_plain_bare's)."""
    return (
        not message.attributes
        and message.trace_header is None
        and not message.delay
        and message.group_id is None
        and message.lease is None
    )


def _leased_results(
    items: Sequence[tuple[QueueKey, NewMessage]], by_id: Mapping[str, asyncpg.Record]
) -> list[SendResult | None]:
    """send_plain_across_leased's rows as the sends' results."""
    results: list[SendResult | None] = []
    for _, message in items:
        row = by_id.get(message.id)
        if row is None:
            results.append(None)
        elif message.lease is None:
            results.append(SendResult(message.id))
        else:
            results.append(SendResult(message.id, delivery=arrived_delivered(message, row)))
    return results


def keyed(key: QueueKey, messages: Sequence[NewMessage]) -> bool:
    """Whether a send takes keys: FIFO deduplication ids, or live keys (a deduplication
    id on a standard queue). One statement cannot take a key twice."""
    return key.is_fifo or any(m.deduplication_id is not None for m in messages)


def found_result(result: SendResult | None, key: QueueKey) -> SendResult:
    """A result of send_plain_across; raises QueueNotFound where there is none."""
    if result is None:
        raise QueueNotFound(key)
    return result


def _plain_entry(message: NewMessage) -> dict[str, object]:
    """A message as the plain sends' JSON carries it (queries.sql, plain_insert): its
    attributes, trace header, delay, group id and lease left out where empty, None or 0."""
    entry: dict[str, object] = {"i": message.id, "b": message.body}
    if message.group_id is not None:
        entry["g"] = message.group_id
    return _with_optional(entry, message)


def _fifo_entry(message: NewMessage) -> dict[str, object]:
    """A message as send_fifo_messages's JSON carries it: the plain sends' fields, but
    that attributes, trace header and delay are left out where empty, None or 0 (most
    FIFO batches), with "k" the deduplication id and, only where it differs from that,
    "w" the key its window is kept under (group deduplication; the statement falls back
    on "k", then on the message id)."""
    entry: dict[str, object] = {
        "i": message.id,
        "b": message.body,
        "g": message.group_id,
        "k": message.deduplication_id,
    }
    if message.deduplication_key is not None:
        entry["w"] = message.deduplication_key
    return _with_optional(entry, message)


def _with_optional(entry: dict[str, object], message: NewMessage) -> dict[str, object]:
    """`entry` with what both sends' JSON carries only where a message has it: "a" its
    attributes, "h" its trace header, "d" its delay, "l" its lease (NewMessage.lease)."""
    if message.attributes:
        entry["a"] = attributes_json(message.attributes)
    if message.trace_header is not None:
        entry["h"] = message.trace_header
    if message.delay:
        entry["d"] = float(message.delay)
    if message.lease is not None:
        entry["l"] = float(message.lease)
    return entry


def _fifo_row_result(row: asyncpg.Record, message: NewMessage) -> SendResult | None:
    """A send_fifo_messages row as the send's result; None as _row_result."""
    if not row["duplicate"]:
        return SendResult(message.id, sequence_number=row["sequence_number"])
    if row["message_id"] is not None:
        return SendResult(row["message_id"], row["sequence_number"], duplicate=True)
    return None


def _row_result(row: asyncpg.Record, message: NewMessage) -> SendResult | None:
    """A send statement's row as the send's result; None for a duplicate whose holder
    the statement could not see (_holder_result)."""
    if row["refused"]:
        return SendResult(message.id, refused=True)
    if row["live_holder"] is not None:
        return SendResult(row["live_holder"], duplicate=True)
    if not row["duplicate"]:
        return SendResult(message.id, sequence_number=row["sequence_number"])
    if row["message_id"] is not None:
        return SendResult(row["message_id"], row["sequence_number"], duplicate=True)
    return None


async def _holder_result(
    db: Database, sql: Mapping[str, str], key: QueueKey, row: asyncpg.Record, message: NewMessage
) -> SendResult:
    """A duplicate whose original committed while its statement ran."""
    holder = await db.fetchrow(
        sql["dedup_holder"],
        key.account,
        key.name,
        message.window_key or message.id,
    )
    if holder is None:
        # The holder's window ended between the two statements: no longer a duplicate
        # to report by id, but the send was still not enqueued twice.
        return SendResult(message.id, sequence_number=row["sequence_number"], duplicate=True)
    return SendResult(holder["message_id"], holder["sequence_number"], duplicate=True)


def _no_repeats(messages: Sequence[NewMessage]) -> bool:
    """Whether no two of `messages` take the same key (the common case: the batch goes
    as it is, without first_uses's mapping)."""
    return len({m.window_key for m in messages}) == len(messages)


def first_uses(
    messages: Sequence[NewMessage],
) -> tuple[list[NewMessage], list[tuple[int, bool]]]:
    """A FIFO batch without repeated deduplication ids (one statement cannot claim an id
    twice), and for each message: its index in that batch, and whether it repeats an
    earlier one (then it is a duplicate of it, as if sent just after)."""
    unique: list[NewMessage] = []
    first: dict[str, int] = {}
    positions: list[tuple[int, bool]] = []
    for message in messages:
        dedup = message.window_key
        if dedup is not None and dedup in first:
            positions.append((first[dedup], True))
            continue
        if dedup is not None:
            first[dedup] = len(unique)
        positions.append((len(unique), False))
        unique.append(message)
    return unique, positions


def as_duplicate(result: SendResult) -> SendResult:
    # A repeat of a send refused at the depth ceiling is refused with it.
    if result.refused:
        return result
    return SendResult(result.message_id, result.sequence_number, duplicate=True)
