"""PostgresQueueStore: the QueueStore contract on PostgreSQL, through asyncpg.

Each method is one named statement from `sql/queries.sql` (asyncpg prepares and caches
it per connection), the mapping of its rows to the core's values, and the translation
of asyncpg's exceptions: none escapes this module. Batches go in one round trip as
parallel arrays (`unnest`). The guards (fencing token, lease, deduplication window)
are in the statements' WHERE clauses, so every outcome is decided atomically.
"""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence

import asyncpg

from hopper import jsoncodec
from hopper.core import fairness, handoff, limits
from hopper.core.errors import QueueNotFound, StoreUnavailable
from hopper.core.model import (
    Delivery,
    MoveTask,
    MoveTaskStatus,
    NewMessage,
    PeekedMessage,
    QueueConfig,
    QueueKey,
    QueueRecord,
    QueueStats,
    Receipt,
    ReceiptOutcome,
    ReceiptResult,
    SendResult,
    VisibilityChange,
)
from hopper.core.outcomes import classify_receipt
from hopper.core.store import WakeUp
from hopper.store.coalesce import Coalescer
from hopper.store.listener import Listener
from hopper.store.rows import (
    arrived_delivered,
    attributes_json,
    config_json,
    delivery,
    move_task,
    peeked,
    record,
)
from hopper.store.schema import (
    Connectable,
    DatabaseUnreachable,
    checked_schema,
    queries,
    require_current,
)
from hopper.store.vacuum import Vacuum

_MAX_BIGINT = 2**63 - 1
# Every statement is prepared once per connection and keyed by its queue: the plan does
# not depend on the parameters' values. Left to choose ("auto"), PostgreSQL kept planning
# the claim afresh on every execution (its generic plan's estimate looked dearer): 0.9 ms
# of planning for 0.25 ms of execution, a claim of 10 taking 1.5 ms instead of 0.63.
_PLANNING = {"plan_cache_mode": "force_generic_plan"}
# What sends may share a statement on: the queue, the clock's reading, the depth ceiling.
SendGroup = tuple[QueueKey, float | None, int | None]
# ... and deletes: the queue, the clock's reading, whether lapsed receipts are refused.
DeleteGroup = tuple[QueueKey, float | None, bool]
# ... and receives: the queue, the lease, the clock's reading (standard queues whose
# messages carry no group ids, leases above zero: see PostgresQueueStore.receive).
ClaimGroup = tuple[QueueKey, float, float | None]
_DATABASE_ERRORS = (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError)


class PostgresQueueStore:
    def __init__(
        self,
        dsn: str,
        *,
        schema: str = "hopper",
        min_size: int = 2,
        max_size: int = 16,
        listen: bool = True,
        notify_delay: float = 0.005,
        coalesce: bool = True,
    ) -> None:
        self._dsn = dsn
        # Concurrent sends and deletes of a queue share statements (coalesce.py); not
        # on a connection that is not ours to run several tasks on.
        self._coalesce = coalesce
        self._schema = checked_schema(schema)
        self._min_size = min_size
        self._max_size = max_size
        self._listen = listen
        self._notify_delay = notify_delay
        self._sql = queries()
        self._pool: asyncpg.Pool | None = None
        self._wake: WakeUp | None = None
        self.listener: Listener | None = None
        # Fair queues: per queue, whether its last receive here saw messages with group
        # ids (the fair claim looks in the queue; the plain one at what it delivered).
        # Those queues are claimed with receive_fair_messages, the others with the plain
        # statement, so a queue that never used group ids pays nothing for fairness. A
        # queue not yet received from here is claimed the fair way once.
        self._grouped: dict[QueueKey, bool] = {}
        self.vacuum = Vacuum(self._vacuum_messages)
        self._sends: Coalescer[SendGroup, NewMessage, SendResult] = Coalescer(
            self._send_group, size=lambda message: len(message.body)
        )
        self._deletes: Coalescer[DeleteGroup, Receipt, asyncpg.Record] = Coalescer(
            self._delete_group, size=lambda receipt: 1
        )
        self._claims: Coalescer[ClaimGroup, None, tuple[Delivery | None, bool]] = Coalescer(
            self._claim_group, size=lambda place: 1
        )
        self._dead_lettered: Counter[QueueKey] = Counter()

    # --- life cycle -----------------------------------------------------------------

    async def start(self, wake: WakeUp) -> None:
        """Open the pool and the listener. Raises DatabaseUnreachable, and
        SchemaNotCurrent or SchemaTooNew when the schema does not match this code."""
        self._wake = wake
        try:
            self._pool = await asyncpg.create_pool(
                self._dsn,
                min_size=self._min_size,
                max_size=self._max_size,
                server_settings={"search_path": self._schema, **_PLANNING},
                init=_init_connection,
                reset=_session_is_clean,
            )
        except _DATABASE_ERRORS as error:
            raise DatabaseUnreachable(f"cannot connect to the database: {error}") from error
        try:
            with _translated():
                async with self._pool.acquire() as connection:
                    await require_current(connection)
                if self._listen:
                    self.listener = Listener(
                        self._listening_connection,
                        wake,
                        self._wake_all,
                        notify_sql=self._sql["notify"],
                        flush_delay=self._notify_delay,
                    )
                    await self.listener.start()
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        await self._sends.close()
        await self._deletes.close()
        await self._claims.close()
        await self.vacuum.close()
        listener, self.listener = self.listener, None
        pool, self._pool = self._pool, None
        with contextlib.suppress(*_DATABASE_ERRORS):
            if listener is not None:
                await listener.close()
            if pool is not None:
                await pool.close()

    async def _listening_connection(self) -> asyncpg.Connection:
        return await asyncpg.connect(self._dsn, server_settings={"search_path": self._schema})

    async def _vacuum_messages(self) -> float:
        """VACUUM the messages table (see vacuum.py); its row estimate afterwards."""
        async with self._db.acquire() as connection:
            await connection.execute(self._sql["vacuum_messages"])
            return float(await connection.fetchval(self._sql["messages_rows"]))

    async def _wake_all(self) -> None:
        """After the LISTEN connection came back: notifications may have been lost while
        it was down, so every queue is worth another look."""
        if self._wake is None:
            return
        with contextlib.suppress(*_DATABASE_ERRORS):
            for row in await self._db.fetch(self._sql["queue_keys"]):
                self._wake(QueueKey(row["account"], row["name"]), None)

    @property
    def _db(self) -> asyncpg.Pool:
        if self._pool is None:
            raise StoreUnavailable("the store is not started")
        return self._pool

    # --- queues ---------------------------------------------------------------------

    async def create_queue(
        self,
        key: QueueKey,
        config: QueueConfig,
        tags: Mapping[str, str],
        *,
        now: float | None,
    ) -> tuple[QueueRecord, bool]:
        with _translated(key):
            while True:
                row = await self._db.fetchrow(
                    self._sql["create_queue"],
                    key.account,
                    key.name,
                    config_json(config),
                    dict(tags),
                    now,
                )
                # No row: a concurrent create committed after our snapshot; look again.
                if row is not None:
                    return record(row), bool(row["created"])

    async def get_queue(self, key: QueueKey) -> QueueRecord | None:
        with _translated(key):
            row = await self._db.fetchrow(self._sql["get_queue"], key.account, key.name)
        return None if row is None else record(row)

    async def list_queues(
        self, account: str, *, prefix: str = "", after: str | None = None, limit: int = 1000
    ) -> list[QueueRecord]:
        with _translated():
            rows = await self._db.fetch(self._sql["list_queues"], account, prefix, after, limit)
        return [record(row) for row in rows]

    async def update_queue(
        self, key: QueueKey, config: QueueConfig, *, now: float | None
    ) -> QueueRecord:
        with _translated(key):
            row = await self._db.fetchrow(
                self._sql["update_queue"], key.account, key.name, config_json(config), now
            )
        return record(_found(row, key))

    async def delete_queue(self, key: QueueKey, *, now: float | None) -> float | None:
        with _translated(key):
            deleted_at: float | None = await self._db.fetchval(
                self._sql["delete_queue"], key.account, key.name, now
            )
        return deleted_at

    async def last_deleted_at(self, key: QueueKey) -> float | None:
        with _translated(key):
            deleted_at: float | None = await self._db.fetchval(
                self._sql["last_deleted_at"], key.account, key.name
            )
        return deleted_at

    async def set_tags(
        self, key: QueueKey, *, add: Mapping[str, str], remove: Sequence[str]
    ) -> QueueRecord:
        with _translated(key):
            row = await self._db.fetchrow(
                self._sql["set_tags"], key.account, key.name, dict(add), list(remove)
            )
        return record(_found(row, key))

    async def dead_letter_sources(self, target: QueueKey) -> list[QueueKey]:
        with _translated(target):
            rows = await self._db.fetch(
                self._sql["dead_letter_sources"], target.account, target.name
            )
        return [QueueKey(row["account"], row["name"]) for row in rows]

    # --- messages -------------------------------------------------------------------

    async def send(
        self,
        key: QueueKey,
        messages: Sequence[NewMessage],
        *,
        now: float | None,
        max_depth: int | None = None,
    ) -> list[SendResult]:
        handoff.check_leases(key, messages, max_depth)
        # One statement cannot take a key twice: repeats in the batch are duplicates of
        # their first use (FIFO deduplication ids; live keys on a standard queue).
        repeats = key.is_fifo or any(m.deduplication_id is not None for m in messages)
        unique, positions = _first_uses(messages) if repeats else (list(messages), None)
        with _translated(key):
            if repeats or not self._coalesce:
                results = await self._send_unique(key, unique, now, max_depth)
            else:  # no keys to take: concurrent sends of the queue share a statement
                results = await self._sends.submit((key, now, max_depth), unique)
        self._tell_others(key, unique, results)
        if positions is None:
            return results
        return [
            _as_duplicate(results[index]) if repeat else results[index]
            for index, repeat in positions
        ]

    def _tell_others(
        self, key: QueueKey, sent: Sequence[NewMessage], results: Sequence[SendResult]
    ) -> None:
        """Poke other processes: with how many messages are receivable now, or, when
        only delayed ones were sent, with no count (their waiters re-read deadlines)."""
        if self.listener is None:
            return
        pairs = zip(sent, results, strict=True)
        # (a message enqueued already delivered is no news to anyone)
        enqueued = [m for m, r in pairs if not (r.duplicate or r.refused or m.lease is not None)]
        if enqueued:
            receivable = sum(m.delay <= 0 for m in enqueued)
            self.listener.poke(key, receivable or None)

    async def _send_group(self, group: SendGroup, messages: list[NewMessage]) -> list[SendResult]:
        key, now, max_depth = group
        return await self._send_unique(key, messages, now, max_depth)

    async def _send_unique(
        self,
        key: QueueKey,
        messages: Sequence[NewMessage],
        now: float | None,
        max_depth: int | None,
    ) -> list[SendResult]:
        # The common case (nothing to take, nothing to count) has a lean statement.
        plain = not key.is_fifo and max_depth is None
        if plain and messages and all(m.deduplication_id is None for m in messages):
            return await self._send_plain(key, messages, now)
        rows = await self._db.fetch(
            self._sql["send_messages"],
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
        if not messages:
            await self._require_queue(key)
            return []
        if rows[0]["queue_id"] is None:
            raise QueueNotFound(key)
        return [await self._send_result(key, row, m) for row, m in zip(rows, messages, strict=True)]

    async def _send_plain(
        self, key: QueueKey, messages: Sequence[NewMessage], now: float | None
    ) -> list[SendResult]:
        payload = [
            {
                "i": m.id,
                "b": m.body,
                "a": attributes_json(m.attributes),
                "h": m.trace_header,
                "d": float(m.delay),
                "g": m.group_id,
            }
            for m in messages
        ]
        leased = False
        for entry, message in zip(payload, messages, strict=True):
            if message.lease is not None:
                entry["l"] = float(message.lease)
                leased = True
        rows = await self._db.fetch(
            self._sql["send_plain_messages"],
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

    async def _send_result(
        self, key: QueueKey, row: asyncpg.Record, message: NewMessage
    ) -> SendResult:
        if row["refused"]:
            return SendResult(message.id, refused=True)
        if row["live_holder"] is not None:
            return SendResult(row["live_holder"], duplicate=True)
        if not row["duplicate"]:
            return SendResult(message.id, sequence_number=row["sequence_number"])
        if row["message_id"] is not None:
            return SendResult(row["message_id"], row["sequence_number"], duplicate=True)
        holder = await self._db.fetchrow(
            self._sql["dedup_holder"],
            key.account,
            key.name,
            message.window_key or message.id,
        )
        if holder is None:
            # The holder's window ended between the two statements: no longer a duplicate
            # to report by id, but the send was still not enqueued twice.
            return SendResult(message.id, sequence_number=row["sequence_number"], duplicate=True)
        return SendResult(holder["message_id"], holder["sequence_number"], duplicate=True)

    async def receive(
        self,
        key: QueueKey,
        *,
        max_messages: int,
        visibility_timeout: float,
        now: float | None,
        attempt_id: str | None = None,
    ) -> list[Delivery]:
        with _translated(key):
            if key.is_fifo:
                return await self._receive_fifo(
                    key, max_messages, visibility_timeout, now, attempt_id
                )
            if self._coalesce and visibility_timeout > 0 and self._grouped.get(key) is False:
                # Concurrent receives of the queue share a claim (see coalesce.py). A
                # receive whose client hangs up meanwhile leaves its share leased to
                # nobody until the lease runs out, as a lone receive's claim would.
                group = (key, float(visibility_timeout), now)
                shares = await self._claims.submit(group, [None] * max_messages)
                deliveries = [delivery for delivery, _ in shares if delivery is not None]
                if len(deliveries) == max_messages or not any(moved for _, moved in shares):
                    return deliveries
                # Poison messages took places in the shared claim: look again, alone.
                async with self._db.acquire() as connection:
                    return await self._claim_all(
                        connection, key, max_messages, visibility_timeout, now, deliveries
                    )
            async with self._db.acquire() as connection:
                return await self._claim_all(
                    connection, key, max_messages, visibility_timeout, now
                )

    async def _claim_group(
        self, group: ClaimGroup, places: list[None]
    ) -> list[tuple[Delivery | None, bool]]:
        """One claim for the receives of `group`, one place per message they take: the
        deliveries in send order, padded with None, and whether any message was moved to
        the dead-letter queue instead (then the receives short of messages look again)."""
        key, visibility_timeout, now = group
        async with self._db.acquire() as connection:
            claimed, moved = await self._claim(
                connection, key, len(places), visibility_timeout, now, []
            )
        self._dead_lettered[key] += moved
        padded: list[Delivery | None] = [*claimed, *[None] * (len(places) - len(claimed))]
        return [(delivery, moved > 0) for delivery in padded]

    async def _receive_fifo(
        self,
        key: QueueKey,
        max_messages: int,
        visibility_timeout: float,
        now: float | None,
        attempt_id: str | None,
    ) -> list[Delivery]:
        """A FIFO receive: one transaction under the queue's receive lock, since group
        locking must see the leases of the receive before it, and an attempt id is
        replayed or recorded together with its claim."""
        window = float(limits.RECEIVE_ATTEMPT_WINDOW_SECONDS)
        async with self._db.acquire() as connection, connection.transaction():
            await connection.execute(self._sql["lock_queue_for_receive"], key.account, key.name)
            await connection.execute(self._sql["forget_dedup_ids"], key.account, key.name, now)
            if attempt_id is not None:
                rows = await connection.fetch(
                    self._sql["replay_receive_attempt"],
                    key.account, key.name, now, attempt_id, float(visibility_timeout), window,
                )
                if rows:
                    return [delivery(row) for row in rows]
            deliveries = await self._claim_all(
                connection, key, max_messages, visibility_timeout, now
            )
            if attempt_id is not None and deliveries:
                await connection.execute(
                    self._sql["record_receive_attempt"],
                    key.account, key.name, now, attempt_id,
                    [d.message.id for d in deliveries],
                    [d.token for d in deliveries],
                    [d.visible_at for d in deliveries],
                    window,
                )
        return deliveries

    async def _claim_all(
        self,
        connection: Connectable,
        key: QueueKey,
        max_messages: int,
        visibility_timeout: float,
        now: float | None,
        already: Sequence[Delivery] = (),
    ) -> list[Delivery]:
        deliveries: list[Delivery] = list(already)
        # Messages moved to the dead-letter queue take places in the claim's LIMIT;
        # look again for the places they left, so a poison message costs no delivery.
        # The next look leaves out what this receive claimed (a zero lease leaves it
        # visible): each message is delivered, or moved, at most once a receive.
        while len(deliveries) < max_messages:
            claimed, moved = await self._claim(
                connection,
                key,
                max_messages - len(deliveries),
                visibility_timeout,
                now,
                [d.message.id for d in deliveries],
            )
            deliveries.extend(claimed)
            self._dead_lettered[key] += moved
            if not moved:
                break
        return deliveries

    async def _claim(
        self,
        connection: Connectable,
        key: QueueKey,
        limit: int,
        visibility_timeout: float,
        now: float | None,
        claimed_ids: list[str],
    ) -> tuple[list[Delivery], int]:
        args: tuple[object, ...] = (key.account, key.name, now, limit, float(visibility_timeout))
        statement = "receive_messages"
        if not key.is_fifo and self._grouped.get(key, True):
            statement = "receive_fair_messages"
            args += (fairness.NOISY_MIN_IN_FLIGHT, fairness.NOISY_SHARE)
        args += (claimed_ids,)
        rows = await _deadlock_retried(connection, self._sql[statement], *args)
        if not rows[0]["queue_found"]:
            self._grouped.pop(key, None)
            raise QueueNotFound(key)
        deliveries = [delivery(row) for row in rows if row["id"] is not None]
        if statement == "receive_fair_messages":
            self._grouped[key] = rows[0]["grouped"]
        else:
            self._grouped[key] = any(d.message.group_id is not None for d in deliveries)
        return deliveries, int(rows[0]["moved"])

    async def delete(
        self,
        key: QueueKey,
        receipts: Sequence[Receipt],
        *,
        refuse_expired: bool,
        now: float | None,
    ) -> list[ReceiptResult]:
        with _translated(key):
            # concurrent deletes of the queue share a statement (see coalesce.py)
            group = (key, now, refuse_expired)
            rows = await (
                self._deletes.submit(group, receipts)
                if self._coalesce
                else self._delete_group(group, list(receipts))
            )
            results = await self._classify_all(key, receipts, rows, refuse_expired)
        self.vacuum.deleted(sum(r.outcome is ReceiptOutcome.OK for r in results))
        return _repeats_gone(receipts, results)

    async def _delete_group(
        self, group: DeleteGroup, receipts: list[Receipt]
    ) -> list[asyncpg.Record]:
        key, now, refuse_expired = group
        return await _deadlock_retried(
            self._db,
            self._sql["delete_messages"],
            key.account,
            key.name,
            now,
            [r.message_id for r in receipts],
            [_bounded(r.token) for r in receipts],
            refuse_expired,
        )

    async def change_visibility(
        self,
        key: QueueKey,
        changes: Sequence[VisibilityChange],
        *,
        refuse_expired: bool,
        now: float | None,
        max_total: float | None = None,
    ) -> list[ReceiptResult]:
        receipts = [c.receipt for c in changes]
        with _translated(key):
            rows = await self._db.fetch(
                self._sql["change_visibility"],
                key.account,
                key.name,
                now,
                [r.message_id for r in receipts],
                [_bounded(r.token) for r in receipts],
                [float(c.timeout) for c in changes],
                refuse_expired,
                max_total,
            )
            results = await self._classify_all(key, receipts, rows, refuse_expired)
        # A lease cut short makes a message receivable before the deadline other
        # processes' waiters are sleeping towards.
        if self.listener is not None and any(r.outcome is ReceiptOutcome.OK for r in results):
            self.listener.poke(key)
        return results

    async def _classify_all(
        self,
        key: QueueKey,
        receipts: Sequence[Receipt],
        rows: Sequence[asyncpg.Record],
        refuse_expired: bool,
    ) -> list[ReceiptResult]:
        if not receipts:
            await self._require_queue(key)
            return []
        if rows[0]["queue_id"] is None:
            raise QueueNotFound(key)
        results = [
            classify(
                r.token,
                row["done"],
                row["current_token"],
                row["lapsed"],
                refuse_expired,
                beyond=row.get("beyond", False),
            )
            for r, row in zip(receipts, rows, strict=True)
        ]
        pairs = list(zip(receipts, results, strict=True))
        raced = [r.message_id for r, result in pairs if result is None]
        tokens = await self._current_tokens(key, raced) if raced else {}
        return [result or _after_race(r.token, tokens.get(r.message_id)) for r, result in pairs]

    async def _current_tokens(self, key: QueueKey, ids: list[str]) -> dict[str, int]:
        rows = await self._db.fetch(self._sql["current_tokens"], key.account, key.name, ids)
        return {row["id"]: row["token"] for row in rows}

    async def purge(self, key: QueueKey, *, now: float | None) -> int:
        with _translated(key):
            row = await self._planned_for_values("purge", key.account, key.name, now)
        purged = int(_found_id(row, key)["purged"])
        self.vacuum.deleted(purged)
        return purged

    async def last_purged_at(self, key: QueueKey) -> float | None:
        with _translated(key):
            row = await self._db.fetchrow(self._sql["last_purged_at"], key.account, key.name)
        purged_at: float | None = _found(row, key)["last_purged_at"]
        return purged_at

    async def stats(self, key: QueueKey, *, now: float | None) -> QueueStats:
        with _translated(key):
            row = _found_id(
                await self._planned_for_values("stats", key.account, key.name, now), key
            )
        return QueueStats(
            visible=row["visible"],
            in_flight=row["in_flight"],
            delayed=row["delayed"],
            oldest_sent_at=row["oldest_sent_at"],
            oldest_visible_sent_at=row["oldest_visible_sent_at"],
            redelivered=row["redelivered"],
            redeliveries=int(row["redeliveries"]),
        )

    async def next_visible_at(self, key: QueueKey, *, now: float | None) -> float | None:
        with _translated(key):
            row = _found_id(
                await self._planned_for_values("next_visible_at", key.account, key.name, now),
                key,
            )
        at: float | None = row["next_visible_at"]
        return at

    async def _planned_for_values(self, name: str, *args: object) -> asyncpg.Record | None:
        """One row of a statement that reads through a queue's rows (a count, a minimum,
        a purge, the retention sweep), planned for these values. The pool's generic plans
        (_PLANNING) suit the statements keyed by position in a queue; these are not: a
        generic plan counted a small queue beside a queue of 1,000,000 messages by reading
        the whole table (a scrape of 22 queues: 3,960 ms against 470 planned for values).
        Two more round trips, on paths that are not per message (a long poll's deadline
        look-up is shared for 250 ms: core/deadlines.py)."""
        async with self._db.acquire() as connection, connection.transaction():
            await connection.execute("SET LOCAL plan_cache_mode = force_custom_plan")
            return await connection.fetchrow(self._sql[name], *args)

    async def _require_queue(self, key: QueueKey) -> None:
        if await self.get_queue(key) is None:
            raise QueueNotFound(key)

    # --- operators (metrics and the dashboard) ------------------------------------------

    async def peek(self, key: QueueKey, *, limit: int, now: float | None) -> list[PeekedMessage]:
        with _translated(key):
            rows = await self._db.fetch(
                self._sql["peek_messages"], key.account, key.name, now, limit
            )
        if rows[0]["found_queue_id"] is None:
            raise QueueNotFound(key)
        return [peeked(row) for row in rows if row["id"] is not None]

    async def accounts(self) -> list[str]:
        with _translated():
            rows = await self._db.fetch(self._sql["accounts"])
        return [row["account"] for row in rows]

    def dead_lettered(self) -> Mapping[QueueKey, int]:
        return {key: moved for key, moved in self._dead_lettered.items() if moved}

    # --- retention ------------------------------------------------------------------

    async def sweep_expired(self, *, limit: int, now: float | None) -> int:
        with _translated():
            # Rows of deleted queues are no expired messages, only garbage: not counted.
            await self._db.fetchval(self._sql["sweep_orphans"], limit)
            row = await self._planned_for_values("sweep_expired", now, limit)
        return 0 if row is None else int(row[0])

    # --- message move tasks -----------------------------------------------------------

    async def move_messages(
        self, source: QueueKey, destination: QueueKey | None, *, limit: int, now: float | None
    ) -> int:
        args = (
            source.account,
            source.name,
            now,
            None if destination is None else destination.account,
            None if destination is None else destination.name,
            limit,
        )
        with _translated(source):
            async with self._db.acquire() as connection, connection.transaction():
                if source.is_fifo:
                    # Moves take turns with the queue's receives, as receives do: a
                    # receive must not claim past a group's message being moved away.
                    await connection.execute(
                        self._sql["lock_queue_for_receive"], source.account, source.name
                    )
                row = await connection.fetchrow(self._sql["move_messages"], *args)
        if row is None or row["queue_id"] is None:
            raise QueueNotFound(source)
        if not row["destination_found"] and destination is not None:
            raise QueueNotFound(destination)
        moved = int(row["moved"])
        if moved and destination is not None and self.listener is not None:
            # Waiters in other processes: the arrivals are receivable at once.
            self.listener.poke(destination)
        return moved

    async def create_move_task(self, task: MoveTask) -> bool:
        destination = task.destination
        with _translated():
            created = await self._db.fetchval(
                self._sql["create_move_task"],
                task.id,
                task.source.account,
                task.source.name,
                None if destination is None else destination.account,
                None if destination is None else destination.name,
                task.max_per_second,
                task.status.value,
                task.started_at,
                task.to_move,
                task.moved,
                task.failure_reason,
                task.lease_until,
            )
        return created is not None

    async def get_move_task(self, task_id: str) -> MoveTask | None:
        with _translated():
            row = await self._db.fetchrow(self._sql["get_move_task"], task_id)
        return None if row is None else move_task(row)

    async def list_move_tasks(self, source: QueueKey, *, limit: int) -> list[MoveTask]:
        with _translated():
            rows = await self._db.fetch(
                self._sql["list_move_tasks"], source.account, source.name, limit
            )
        return [move_task(row) for row in rows]

    async def cancel_move_task(self, task_id: str) -> MoveTask | None:
        with _translated():
            row = await self._db.fetchrow(self._sql["cancel_move_task"], task_id)
        return None if row is None else move_task(row)

    async def advance_move_task(
        self,
        task_id: str,
        *,
        moved: int,
        lease_until: float,
        finish: MoveTaskStatus | None = None,
        failure_reason: str | None = None,
    ) -> MoveTask | None:
        with _translated():
            row = await self._db.fetchrow(
                self._sql["advance_move_task"],
                task_id,
                moved,
                lease_until,
                None if finish is None else finish.value,
                failure_reason,
            )
        return None if row is None else move_task(row)

    async def claim_move_tasks(self, *, lease_until: float, now: float | None) -> list[MoveTask]:
        with _translated():
            rows = await self._db.fetch(self._sql["claim_move_tasks"], lease_until, now)
        return [move_task(row) for row in rows]


# --- receipts -----------------------------------------------------------------------


def classify(
    presented: int,
    done: bool,
    current: int | None,
    lapsed: bool | None,
    refuse_expired: bool,
    *,
    beyond: bool = False,
) -> ReceiptResult | None:
    """The outcome of one receipt, from the statement's facts: whether the guarded write
    happened, and the message's token and lease as they were before it
    (core/outcomes.py classifies them). None when the facts contradict each other (they
    say the write was due, yet it did not happen: the message changed while the
    statement ran): then `_after_race` decides on a fresh look."""
    if done:
        return ReceiptResult(ReceiptOutcome.OK)
    result = classify_receipt(presented, current, lapsed, refuse_expired, beyond=beyond)
    return None if result.outcome is ReceiptOutcome.OK else result


def _repeats_gone(receipts: Sequence[Receipt], results: list[ReceiptResult]) -> list[ReceiptResult]:
    """A message deleted by an earlier receipt of the same batch is gone for the later
    ones, as if the batch ran one receipt at a time."""
    deleted: set[str] = set()
    out = []
    for receipt, result in zip(receipts, results, strict=True):
        if result.outcome is ReceiptOutcome.OK and receipt.message_id in deleted:
            result = ReceiptResult(ReceiptOutcome.GONE)
        elif result.outcome is ReceiptOutcome.OK:
            deleted.add(receipt.message_id)
        out.append(result)
    return out


def _bounded(token: int) -> int:
    """A token that fits bigint. Larger ones were never issued, and a clamped one is
    still larger than any issued token, so it still classifies as GONE."""
    return max(min(token, _MAX_BIGINT), -_MAX_BIGINT)


def _after_race(presented: int, current: int | None) -> ReceiptResult:
    if current is not None and current > presented:
        return ReceiptResult(ReceiptOutcome.SUPERSEDED, current_token=current)
    return ReceiptResult(ReceiptOutcome.GONE)


# --- rows ---------------------------------------------------------------------------


def _first_uses(
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


def _as_duplicate(result: SendResult) -> SendResult:
    # A repeat of a send refused at the depth ceiling is refused with it.
    if result.refused:
        return result
    return SendResult(result.message_id, result.sequence_number, duplicate=True)


def _found(row: asyncpg.Record | None, key: QueueKey) -> asyncpg.Record:
    if row is None:
        raise QueueNotFound(key)
    return row


def _found_id(row: asyncpg.Record | None, key: QueueKey) -> asyncpg.Record:
    """The row of a statement that reports its queue's id, NULL when there is none."""
    if row is None or row["queue_id"] is None:
        raise QueueNotFound(key)
    return row


# --- the edge -----------------------------------------------------------------------


async def _init_connection(connection: asyncpg.Connection) -> None:
    # jsonb in and out as Python values (config, tags, attributes).
    await connection.set_type_codec(
        "jsonb", encoder=json.dumps, decoder=jsoncodec.loads, schema="pg_catalog"
    )


async def _deadlock_retried(
    db: Connectable | asyncpg.Pool, sql: str, *args: object, attempts: int = 3
) -> list[asyncpg.Record]:
    """Run a claim or a delete, again if PostgreSQL broke a deadlock by aborting it.

    A claim and a delete can each wait for the other: under READ COMMITTED a claim that
    finds a row changed since its snapshot locks the newest version before re-checking
    it, and keeps that lock even when it then skips the row, while a delete may wait for
    that row holding rows the claim needs. The aborted statement changed nothing, so it
    runs again. Inside a transaction (a FIFO receive) the abort is the caller's."""
    for attempt in range(1, attempts + 1):
        try:
            return await db.fetch(sql, *args)
        except asyncpg.DeadlockDetectedError:
            in_transaction = not isinstance(db, asyncpg.Pool) and db.is_in_transaction()
            if attempt == attempts or in_transaction:
                raise
    raise AssertionError("unreachable")


async def _session_is_clean(connection: asyncpg.Connection) -> None:
    """The pool's reset hook. asyncpg's default sends RESET ALL, UNLISTEN *, CLOSE ALL
    and pg_advisory_unlock_all() on every release: a round trip per request (a third of
    a SendMessage's). The store's pooled connections hold no session state (no SET, no
    LISTEN, no cursor or session lock outlives a statement; the listener and migrations
    use their own connections), and asyncpg still rolls back an open transaction."""


@contextlib.contextmanager
def _translated(key: QueueKey | None = None) -> Iterator[None]:
    """asyncpg's exceptions become the core's: a foreign-key failure means the queue
    was deleted under us; anything else means the database is not doing its job."""
    try:
        yield
    except asyncpg.ForeignKeyViolationError as error:
        if key is None:
            raise StoreUnavailable(str(error)) from error
        raise QueueNotFound(key) from error
    except _DATABASE_ERRORS as error:
        raise StoreUnavailable(f"{type(error).__name__}: {error}") from error
