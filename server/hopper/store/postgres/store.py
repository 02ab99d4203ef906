"""PostgresQueueStore: the QueueStore contract on PostgreSQL, through asyncpg.

Each method is one store intent: a named statement from `sql/queries.sql` (asyncpg
prepares and caches it per connection) and the mapping of its rows to the core's
values. Around it: the edge (pool.py: the pool, planning settings, deadlock retries,
and the translation of asyncpg's exceptions, none of which escapes the store), the
queues' statements (queues.py), the send routes and statements (sends.py), statements
shared by concurrent calls (coalesce.py), receipts read from rows (receipts.py), and
rows both ways (rows.py). Batches go in one round trip as parallel arrays (`unnest`).
The guards (fencing token, lease, deduplication window) are in the statements' WHERE
clauses, so every outcome is decided atomically.

Rules stated in the core and called here: receipt classification (core/outcomes.py,
from the facts the guarded statements return), which sent messages are news to waiters
(core/wakeups.py), which may be enqueued already delivered (core/handoff.py). Rules the
statements implement themselves, as the in-memory store does in Python, because each
must be decided inside one statement (a read-modify-write across round trips would
race other processes): the claim (three statements sharing one text but for how they
pick: queries.sql's fragments), deduplication windows and live keys, the depth
ceiling, FIFO receive attempts, moves between queues, and the move-task state changes
(core/move_tasks.py states them; here they are guarded UPDATEs and a unique index).
tests/contract/ pins every store to the same outcomes for each.
"""

from __future__ import annotations

import contextlib
import functools
from collections import Counter
from collections.abc import Sequence

import asyncpg

from hopper.core import fairness, handoff, limits
from hopper.core.errors import QueueNotFound, StoreUnavailable
from hopper.core.model import (
    Delivery,
    NewMessage,
    QueueKey,
    Receipt,
    ReceiptOutcome,
    ReceiptResult,
    SendResult,
    VisibilityChange,
)
from hopper.core.store import WakeUp
from hopper.core.wakeups import news
from hopper.store.postgres import fifo
from hopper.store.postgres.coalesce import Coalescer
from hopper.store.postgres.counts import CountStatements
from hopper.store.postgres.deletes import DeleteHints
from hopper.store.postgres.failures import DATABASE_ERRORS, translated
from hopper.store.postgres.listener import Listener
from hopper.store.postgres.pool import (
    deadlock_retried,
    fetched_together,
    held_on,
    listening_connection,
    open_pool,
    receive_lock,
    receive_turn,
)
from hopper.store.postgres.queues import QueueStatements
from hopper.store.postgres.receipts import bounded, outcomes_of, repeats_gone, tokens_text
from hopper.store.postgres.rows import (
    delivery,
)
from hopper.store.postgres.schema import (
    Connectable,
    checked_schema,
    queries,
    require_current,
)
from hopper.store.postgres.sends import Sender
from hopper.store.postgres.slots import DispatchSlotStatements
from hopper.store.postgres.tasks import MoveTaskStatements
from hopper.store.postgres.vacuum import Vacuum

# At most this many FIFO receives share a turn under their queue's receive lock.
FIFO_TURN_RECEIVES = 16

# What deletes may share a statement on: the queue, the clock's reading, whether lapsed
# receipts are refused.
DeleteGroup = tuple[QueueKey, float | None, bool]
# ... and receives: the queue, the lease, the clock's reading (standard queues whose
# messages carry no group ids, leases above zero: see PostgresQueueStore.receive).
ClaimGroup = tuple[QueueKey, float, float | None]


class PostgresQueueStore(
    QueueStatements, CountStatements, MoveTaskStatements, DispatchSlotStatements
):
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
        # The caller's connection, for a store made by on_connection().
        self._connection: Connectable | None = None
        self._wake: WakeUp | None = None
        self.listener: Listener | None = None
        # Fair queues: per queue, whether its last receive here saw messages with group
        # ids (the fair claim looks in the queue; the plain one at what it delivered).
        # Those queues are claimed with receive_fair_messages, the others with the plain
        # statement, so a queue that never used group ids pays nothing for fairness. A
        # queue not yet received from here is claimed the fair way once.
        self._grouped: dict[QueueKey, bool] = {}
        # FIFO queues: per queue, how many claims probe each group before one walks the
        # queue, and how many turns claim receive by receive before one claims for all
        # (fifo.py); a queue not claimed here yet is walked, a turn in one claim.
        self._probes_due: dict[QueueKey, int] = {}
        self._singles_due: Counter[QueueKey] = Counter()
        # FIFO queues: receives here so far, for _dedup_sweep_due.
        self._fifo_receives: Counter[QueueKey] = Counter()
        self.vacuum = Vacuum(self._vacuum_messages)
        self._sender = Sender(lambda: self._on, self._sql, coalesce=coalesce)
        # Look-ups of queues' rows share statements: the core reads a queue's record at
        # most once a second (core/recent.py), so requests spread over many queues
        # each need one.
        self._lookups: Coalescer[None, QueueKey, asyncpg.Record | None] = Coalescer(
            self._get_queues, size=lambda key: 1
        )
        # Deletes and claims of a queue, one statement at a time: while one commits the
        # next group gathers, a bigger group per statement, fewer commits and round
        # trips. Each holds a pool connection while its statements follow one another.
        # A claim waits for the receives the last one answered (coalesce.py); a delete
        # for the deletes of the receives its queue's last shared claim answered
        # (deletes.py), not for its own callers: they come back after a receive.
        self._deletes: Coalescer[DeleteGroup, Receipt, asyncpg.Record] = Coalescer(
            size=lambda receipt: 1,
            parallel=1,
            hold=held_on(lambda: self._db, self._delete_group),
            expect=lambda group: self.delete_hints.awaited(group[0]),
        )
        # the claims' addresses and the deletes awaited, for the deletes (deletes.py)
        self.delete_hints = DeleteHints()
        self._claims: Coalescer[ClaimGroup, None, tuple[Delivery | None, bool]] = Coalescer(
            size=lambda place: 1,
            parallel=1,
            hold=held_on(lambda: self._db, self._claim_group),
            regather=_took_some,
        )
        # FIFO receives of a queue take turns under its receive lock; those waiting for
        # a turn share the next one (one transaction, their claims one after another).
        self._fifo_turns: Coalescer[ClaimGroup, int, list[Delivery]] = Coalescer(
            self._fifo_turn, size=lambda wanted: 1, max_items=FIFO_TURN_RECEIVES, parallel=1,
            regather=fifo.coming_back,
        )
        self._dead_lettered: Counter[QueueKey] = Counter()

    # --- life cycle -----------------------------------------------------------------

    @classmethod
    def on_connection(
        cls, connection: Connectable, *, schema: str = "hopper"
    ) -> PostgresQueueStore:
        """A store whose queue look-ups and sends run on `connection`, the caller's
        (inside the caller's transaction: hopper.enqueue), instead of a pool of its own.
        It is neither started nor closed (the connection stays the caller's), sends no
        notifications (the caller does, in its transaction) and shares no statement with
        other sends. Its statements name no schema: the caller's search_path must lead
        to hopper's schema while it runs them."""
        store = cls("", schema=schema, listen=False, coalesce=False)
        store._connection = connection
        return store

    async def start(self, wake: WakeUp) -> None:
        """Open the pool and the listener. Raises DatabaseUnreachable, and
        SchemaNotCurrent or SchemaTooNew when the schema does not match this code."""
        self._wake = wake
        self._pool = await open_pool(
            self._dsn, self._schema, min_size=self._min_size, max_size=self._max_size
        )
        try:
            with translated():
                async with self._pool.acquire() as connection:
                    await require_current(connection)
                if self._listen:
                    self.listener = Listener(
                        functools.partial(listening_connection, self._dsn, self._schema),
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
        await self._sender.close()
        await self._lookups.close()
        await self._deletes.close()
        await self._claims.close()
        await self._fifo_turns.close()
        await self.vacuum.close()
        listener, self.listener = self.listener, None
        pool, self._pool = self._pool, None
        with contextlib.suppress(*DATABASE_ERRORS):
            if listener is not None:
                await listener.close()
            if pool is not None:
                await pool.close()

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
        with contextlib.suppress(*DATABASE_ERRORS):
            for row in await self._db.fetch(self._sql["queue_keys"]):
                self._wake(QueueKey(row["account"], row["name"]), None)

    @property
    def _db(self) -> asyncpg.Pool:
        if self._pool is None:
            raise StoreUnavailable("the store is not started")
        return self._pool

    @property
    def _on(self) -> Connectable | asyncpg.Pool:
        """Where a look-up or a send runs: the caller's connection (on_connection), or
        the pool."""
        return self._connection if self._connection is not None else self._db

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
        with translated(key):
            results = await self._sender.send(key, messages, now, max_depth)
        self._tell_others(key, messages, results)
        return results

    def _tell_others(
        self, key: QueueKey, sent: Sequence[NewMessage], results: Sequence[SendResult]
    ) -> None:
        """Poke other processes: with how many messages are receivable now, or, when
        only delayed ones were sent, with no count (their waiters re-read deadlines)."""
        if self.listener is None:
            return
        enqueued = news(sent, results)
        if enqueued:
            receivable = sum(m.delay <= 0 for m in enqueued)
            self.listener.poke(key, receivable or None)

    async def receive(
        self,
        key: QueueKey,
        *,
        max_messages: int,
        visibility_timeout: float,
        now: float | None,
        attempt_id: str | None = None,
    ) -> list[Delivery]:
        with translated(key):
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
                if deliveries:
                    self.delete_hints.received(key)
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
        self, connection: Connectable, group: ClaimGroup, places: list[None]
    ) -> list[tuple[Delivery | None, bool]]:
        """One claim for the receives of `group`, one place per message they take: the
        deliveries in send order, padded with None, and whether any message was moved to
        the dead-letter queue instead (then the receives short of messages look again)."""
        key, visibility_timeout, now = group
        self.delete_hints.round_begins(key)
        claimed, moved = await self._claim(
            connection, key, len(places), visibility_timeout, now, []
        )
        self.delete_hints.round_claimed(key)
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
        replayed or recorded together with its claim. Without an attempt id, receives
        of the queue that wait for the lock share a turn (_fifo_turn)."""
        if attempt_id is None and self._coalesce:
            group = (key, float(visibility_timeout), now)
            [deliveries] = await self._fifo_turns.submit(group, [max_messages])
            return deliveries
        window = float(limits.RECEIVE_ATTEMPT_WINDOW_SECONDS)
        async with self._db.acquire() as connection, receive_turn(connection, key):
            if self._dedup_sweep_due(key):
                await connection.execute(
                    self._sql["forget_dedup_ids"], key.account, key.name, now
                )
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

    async def _fifo_turn(self, group: ClaimGroup, wanted: list[int]) -> list[list[Delivery]]:
        """One turn under the queue's receive lock for FIFO receives that waited for it,
        in one round trip and one transaction (pool.fetched_together): a statement taking
        the lock and claiming nothing, then their claims one after another, each seeing
        the leases of the ones before it, or, on a queue to walk, one claim for all
        (fifo.turn). The database runs them back to back and commits: the lock is held
        for the claims' own work.
        Receives whose walk fell short (fifo.py) claim again in a turn with the probes.
        A receive whose claim moved poison messages to the dead-letter queue looks again
        for the places they took, in a turn of its own. A receive whose client hung up
        meanwhile still gets its claim, leased to nobody until the lease runs out."""
        key, visibility_timeout, now = group
        answers: dict[int, list[Delivery]] = {}
        waiting = list(range(len(wanted)))
        async with self._db.acquire() as connection:
            if self._dedup_sweep_due(key):
                await deadlock_retried(
                    connection, self._sql["forget_dedup_ids"], key.account, key.name, now
                )
            while waiting:
                limits = [wanted[i] for i in waiting]
                statement, turn = fifo.turn(
                    self._probes_due.get(key, 0), self._singles_due[key],
                    key, now, float(visibility_timeout), limits, receive_lock(key),
                )
                rows = await fetched_together(connection, self._sql[statement], turn)
                short = []
                for i, claim in zip(waiting, fifo.turn_claims(rows, len(waiting)), strict=True):
                    if fifo.fell_short(statement, claim):
                        short.append(i)
                        continue
                    deliveries, moved = self._claimed(key, statement, claim)
                    self._dead_lettered[key] += moved
                    if moved and len(deliveries) < wanted[i]:
                        async with receive_turn(connection, key):
                            deliveries = await self._claim_all(
                                connection, key, wanted[i], visibility_timeout, now, deliveries
                            )
                    answers[i] = deliveries
                got = [len(answers.get(i, ())) for i in waiting]
                due = fifo.singles_due(statement, got, limits, self._singles_due[key])
                self._singles_due[key] = due
                if short:
                    self._probes_due[key] = fifo.AFTER_SHORT_WALK  # (the next turn probes)
                waiting = short
            return [answers[i] for i in range(len(wanted))]

    def _dedup_sweep_due(self, key: QueueKey) -> bool:
        """Whether a FIFO receive of `key` sweeps the queue's deduplication ids past
        their window (forget_dedup_ids): fifo.sweep_due."""
        return fifo.sweep_due(self._fifo_receives, key)

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
        args: tuple[object, ...] = (
            key.account, key.name, now, limit, float(visibility_timeout), claimed_ids
        )
        statement = "receive_messages"
        if key.is_fifo:
            statement = fifo.claim_statement(self._probes_due.get(key, 0))
            args += (0, None)
        elif self._grouped.get(key, True):
            statement = "receive_fair_messages"
            args += (fairness.NOISY_MIN_IN_FLIGHT, fairness.NOISY_SHARE)
        rows = await deadlock_retried(connection, self._sql[statement], *args)
        if fifo.fell_short(statement, rows):
            self._probes_due[key] = fifo.AFTER_SHORT_WALK
            return await self._claim(connection, key, limit, visibility_timeout, now, claimed_ids)
        return self._claimed(key, statement, rows)

    def _claimed(
        self, key: QueueKey, statement: str, rows: Sequence[asyncpg.Record]
    ) -> tuple[list[Delivery], int]:
        """A claim's deliveries and how many messages it moved to the dead-letter queue,
        from its rows; what it says of the queue is kept for the next claim."""
        if not rows[0]["queue_found"]:
            self._grouped.pop(key, None)
            self._probes_due.pop(key, None)
            raise QueueNotFound(key)
        deliveries = [delivery(row) for row in rows if row["id"] is not None]
        if key.is_fifo:
            self._probes_due[key] = fifo.probes_due(statement, rows, self._probes_due.get(key, 0))
        elif statement == "receive_fair_messages":
            self._grouped[key] = rows[0]["grouped"]
        else:
            self._grouped[key] = any(d.message.group_id is not None for d in deliveries)
        self.delete_hints.claimed(rows)
        return deliveries, int(rows[0]["moved"])

    async def delete(
        self,
        key: QueueKey,
        receipts: Sequence[Receipt],
        *,
        refuse_expired: bool,
        now: float | None,
    ) -> list[ReceiptResult]:
        with translated(key):
            # concurrent deletes of the queue share a statement (see coalesce.py)
            group = (key, now, refuse_expired)
            self.delete_hints.deleting(key)
            rows = await (
                self._deletes.submit(group, receipts)
                if self._coalesce
                else self._delete_group(self._db, group, list(receipts))
            )
            results = await outcomes_of(self._db, self._sql, key, receipts, rows, refuse_expired)
        self.vacuum.deleted(sum(r.outcome is ReceiptOutcome.OK for r in results))
        return repeats_gone(receipts, results)

    async def _delete_group(
        self, db: Connectable | asyncpg.Pool, group: DeleteGroup, receipts: list[Receipt]
    ) -> list[asyncpg.Record]:
        key, now, refuse_expired = group
        return await deadlock_retried(
            db,
            self._sql["delete_messages"],
            key.account,
            key.name,
            now,
            [r.message_id for r in receipts],
            tokens_text(receipts),
            refuse_expired,
            self.delete_hints.take(receipts),
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
        with translated(key):
            rows = await self._db.fetch(
                self._sql["change_visibility"],
                key.account,
                key.name,
                now,
                [r.message_id for r in receipts],
                [bounded(r.token) for r in receipts],
                refuse_expired,
                [float(c.timeout) for c in changes],
                max_total,
                [c.error for c in changes],
            )
            results = await outcomes_of(self._db, self._sql, key, receipts, rows, refuse_expired)
        # A lease cut short makes a message receivable before the deadline other
        # processes' waiters are sleeping towards.
        if self.listener is not None and any(r.outcome is ReceiptOutcome.OK for r in results):
            self.listener.poke(key)
        return results

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
        with translated(source):
            async with self._db.acquire() as connection, connection.transaction():
                if source.is_fifo:
                    # Moves take turns with the queue's receives, as receives do: a
                    # receive must not claim past a group's message being moved away.
                    await connection.execute(
                        self._sql["lock_queue_for_receive"], receive_lock(source)
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


def _took_some(shares: list[tuple[Delivery | None, bool]]) -> bool:
    """Whether a receive of a shared claim is coming back soon: one that took messages
    deletes them and receives again; one that found none waits in its long poll."""
    return any(delivery is not None for delivery, _ in shares)
