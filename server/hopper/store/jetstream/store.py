"""JetStreamQueueStore: the QueueStore seam on NATS JetStream (the mapping is in the
package's docstring). This module is the seam's verbs; `steps.py` makes them atomic."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from hopper.core import handoff
from hopper.core.clock import Clock, SystemClock
from hopper.core.errors import QueueError, QueueNotFound, StoreUnavailable
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
    ReceiptResult,
    SendResult,
    StoredMessage,
    VisibilityChange,
)
from hopper.core.store import WakeUp
from hopper.store.jetstream import codec, edge, sends
from hopper.store.jetstream.backlog import Backlog
from hopper.store.jetstream.bodies import Bodies
from hopper.store.jetstream.deduplication import Windows
from hopper.store.jetstream.quiet import Quiet
from hopper.store.jetstream.records import Records
from hopper.store.jetstream.slots import SlotEntries
from hopper.store.jetstream.steps import WINDOW, Done, Loaded, Steps
from hopper.store.jetstream.sweeps import Sweeps
from hopper.store.jetstream.tasks import MoveTasks
from hopper.store.ledger.rules import LedgerStore

log = logging.getLogger("hopper.jetstream")

# What a stats call reads of a queue's backlog to count it exactly (delays, retention);
# beyond, the waiting entries count as visible.
STATS_VIEW = 100


@dataclasses.dataclass
class _Parts:
    """What a started store works with."""

    res: edge.Resources
    records: Records
    bodies: Bodies
    backlog: Backlog
    fifo: sends.FifoSends
    steps: Steps
    tasks: MoveTasks
    slots: SlotEntries
    quiet: Quiet


class JetStreamQueueStore:
    def __init__(
        self,
        urls: Sequence[str],
        *,
        replicas: int = 1,
        prefix: str = "hopper",
        clock: Clock | None = None,
        window: int = WINDOW,
    ) -> None:
        self._urls = list(urls)
        self._replicas = replicas
        self._prefix = prefix
        self._clock: Clock = clock or SystemClock()
        # The most messages a queue's ledger takes in (steps.WINDOW): in flight, delayed
        # or not yet received; the backlog behind waits until some leave.
        self._window = window
        self._parts: _Parts | None = None
        self._watch_task: asyncio.Task[None] | None = None
        self._wake: WakeUp | None = None
        self._reopening: asyncio.Task[None] | None = None
        self._lost: str | None = None
        self._sweeps = Sweeps()

    def _now(self, now: float | None) -> float:
        return self._clock.time() if now is None else now

    @property
    def _p(self) -> _Parts:
        if self._parts is None:
            raise StoreUnavailable(self._lost or "the store is not started")
        if not self._parts.res.nc.is_connected:
            # Fail fast while the client reconnects, rather than after a request timeout:
            # SDKs retry a ServiceUnavailable.
            raise StoreUnavailable("JetStream connection lost; reconnecting")
        return self._parts

    # --- life cycle -----------------------------------------------------------------

    def unavailable(self) -> str | None:
        """Why the store cannot serve now (for `/health`), or None."""
        if self._parts is None:
            return self._lost or "the JetStream store is not started"
        if not self._parts.res.nc.is_connected:
            return "JetStream connection lost; reconnecting"
        return None

    async def start(self, wake: WakeUp) -> None:
        self._wake = wake
        await self._open()

    async def _open(self) -> None:
        res = await edge.connect(
            self._urls, replicas=self._replicas, prefix=self._prefix, closed=self._closed
        )
        records, bodies = Records(res), Bodies(res)
        backlog = Backlog(res, bodies)
        steps = Steps(res, records, bodies, backlog, self._clock, self._window, self._changed)
        tasks, fifo = MoveTasks(res, self._clock), sends.FifoSends(backlog, Windows(res))
        self._parts = _Parts(
            res, records, bodies, backlog, fifo, steps, tasks, SlotEntries(res), Quiet(res)
        )
        self._lost = None
        with edge.translated():
            watcher = await res.ledgers.kv.watch(">", meta_only=True)
            await res.nc.subscribe(res.wake_subject("*"), cb=self._woken)
        self._watch_task = asyncio.create_task(self._watch_ledgers(watcher, records))

    async def _woken(self, msg: Any) -> None:
        """A send to a queue's backlog, here or in another process: its waiters look."""
        parts = self._parts
        key = None if parts is None else parts.records.incarnations.get(msg.subject.split(".")[-1])
        if key is not None and self._wake is not None:
            self._wake(key, None)

    async def _watch_ledgers(self, watcher: Any, records: Records) -> None:
        """A ledger changed, here or in another process: its queue's waiters look again."""
        async for entry in watcher:
            key = None if entry is None else records.incarnations.get(entry.key)
            if key is not None:
                self._changed(key)
                if self._wake is not None:
                    self._wake(key, None)

    def _changed(self, key: QueueKey) -> None:
        """A queue's ledger was written, here or in another process."""
        self._sweeps.changed(key)
        if self._parts is not None:
            self._parts.quiet.changed(key)

    async def _closed(self) -> None:
        """The connection closed for good while the store runs (nats-py does not
        reconnect a connection the server closed with an error): open a new one."""
        if self._wake is None or self._reopening is not None or self._parts is None:
            return  # closing, already reopening, or never opened
        parts, self._parts = self._parts, None
        self._lost = "JetStream connection closed by the server; reopening"
        log.warning("hopper: %s", self._lost)
        if parts is not None:
            parts.res.log.started = False
        if self._watch_task is not None:
            self._watch_task.cancel()
        self._reopening = asyncio.create_task(self._reopen())

    async def _reopen(self) -> None:
        pause = 0.1
        try:
            while self._wake is not None:
                try:
                    await self._open()
                    log.warning("hopper: JetStream connection reopened")
                    return
                except StoreUnavailable as error:
                    self._lost = f"JetStream unavailable ({error.reason}); reopening"
                    await asyncio.sleep(pause)
                    pause = min(pause * 2, 5.0)
        finally:
            self._reopening = None

    async def close(self) -> None:
        self._wake = None
        if self._reopening is not None:
            self._reopening.cancel()
            self._reopening = None
        if self._watch_task is not None:
            self._watch_task.cancel()
            self._watch_task = None
        parts, self._parts = self._parts, None
        if parts is not None:
            parts.steps.close()
            parts.res.log.started = False
            try:
                # Bounded: a shutdown must not wait on a node that stopped answering.
                async with asyncio.timeout(edge.REQUEST_TIMEOUT_SECONDS):
                    await parts.res.nc.close()
            except Exception as error:  # closing a lost connection may fail; it is gone
                log.debug("hopper: closing JetStream: %s", error)

    # --- queues ---------------------------------------------------------------------

    async def create_queue(
        self,
        key: QueueKey,
        config: QueueConfig,
        tags: Mapping[str, str],
        *,
        now: float | None,
    ) -> tuple[QueueRecord, bool]:
        at = self._now(now)
        record = QueueRecord(key, config, created_at=at, last_modified_at=at, tags=dict(tags))
        return await self._p.records.create(record)

    async def get_queue(self, key: QueueKey) -> QueueRecord | None:
        found = await self._p.records.find(key)
        return None if found is None else found[0]

    async def list_queues(
        self, account: str, *, prefix: str = "", after: str | None = None, limit: int = 1000
    ) -> list[QueueRecord]:
        records = [
            r
            for r in await self._p.records.scan(account)
            if r.key.name.startswith(prefix) and (after is None or r.key.name > after)
        ]
        return sorted(records, key=lambda r: r.key.name)[:limit]

    async def update_queue(
        self, key: QueueKey, config: QueueConfig, *, now: float | None
    ) -> QueueRecord:
        at = self._now(now)
        return await self._p.records.change(
            key, lambda r: dataclasses.replace(r, config=config, last_modified_at=at)
        )

    async def delete_queue(self, key: QueueKey, *, now: float | None) -> float | None:
        at = self._now(now)
        deleted = await self._p.records.delete(key, at)
        if deleted is None:
            return None
        record, incarnation = deleted
        # Nothing of a deleted queue stays in this process (issue 25: deleted queues are
        # forgotten); other processes drop theirs when they next look it up.
        self._p.steps.forget(incarnation)
        self._p.records.incarnations.pop(incarnation, None)
        await self._p.backlog.drop(incarnation)
        await self._p.fifo.windows.forget(incarnation)
        # The incarnation went with the record: its ledger and bodies are garbage now.
        raw, revision = await edge.get(self._p.res.ledgers, incarnation)
        data = codec.unpack(raw)
        if data is not None:
            ledger = codec.decode_ledger(data, record, revision)
            await self._p.bodies.drop(ledger.bodies.values())
            with edge.translated():
                await self._p.res.ledgers.kv.purge(incarnation)
        return at

    async def last_deleted_at(self, key: QueueKey) -> float | None:
        return await self._p.records.deleted_at(key)

    async def set_tags(
        self, key: QueueKey, *, add: Mapping[str, str], remove: Sequence[str]
    ) -> QueueRecord:
        def change(record: QueueRecord) -> QueueRecord:
            tags = {**record.tags, **add}
            for tag_key in remove:
                tags.pop(tag_key, None)
            return dataclasses.replace(record, tags=tags)

        return await self._p.records.change(key, change)

    async def dead_letter_sources(self, target: QueueKey) -> list[QueueKey]:
        return sorted(
            (
                r.key
                for r in await self._p.records.scan()
                if r.config.dead_letter is not None and r.config.dead_letter.target == target
            ),
            key=lambda key: (key.name, key.account),
        )

    async def accounts(self) -> list[str]:
        return sorted({r.key.account for r in await self._p.records.scan()})

    async def _delivered(self, deliveries: Sequence[Delivery], done: Done[Any]) -> list[Delivery]:
        """Deliveries as they leave the store: bodies filled in, tokens resolved."""
        filled = await self._p.bodies.fill((d.message for d in deliveries), done.bodies)
        revision = done.revision or 0
        return [
            codec.delivered(d, message, revision)
            for d, message in zip(deliveries, filled, strict=True)
        ]

    # --- messages -------------------------------------------------------------------

    async def send(
        self,
        key: QueueKey,
        messages: Sequence[NewMessage],
        *,
        now: float | None,
        max_depth: int | None = None,
    ) -> list[SendResult]:
        at = self._now(now)
        found = await self._p.records.find(key)
        if found is None:
            raise QueueNotFound(key)
        record, incarnation, _ = found
        handoff.check_leases(key, messages, max_depth)
        if sends.backlogged(record, messages, max_depth):
            if record.config.fifo:
                return await self._p.fifo.send(incarnation, messages, at)
            return await sends.send_plain(self._p.backlog, incarnation, messages, at)
        # Bodies go first: the ledger write that names them is the send's commit point,
        # so a process dying in between leaves an orphaned body, never a lost message.
        stored = [
            StoredMessage(m.id, m.body, m.attributes, m.trace_header, sent_at=at) for m in messages
        ]
        published = await self._p.bodies.publish(stored)

        async def op(model: LedgerStore) -> list[SendResult]:
            return await model.send(key, messages, now=at, max_depth=max_depth)

        try:
            done = await self._p.steps.run(key, op, now=at, new_bodies=published)
            results = done.result
        except QueueError:
            # Refused for certain (no such queue, full): the bodies are nobody's.
            await self._p.bodies.drop(published.values())
            raise
        # Any other failure may have come after the commit: the bodies stay (an orphan
        # costs space until the stream's max age; a message without its body is lost).
        unused = [
            published[m.id]
            for m, r in zip(messages, results, strict=True)
            if r.duplicate or r.refused
        ]
        await self._p.bodies.drop(unused)
        return [
            r
            if r.delivery is None
            else dataclasses.replace(r, delivery=(await self._delivered([r.delivery], done))[0])
            for r in results
        ]

    async def receive(
        self,
        key: QueueKey,
        *,
        max_messages: int,
        visibility_timeout: float,
        now: float | None,
        attempt_id: str | None = None,
    ) -> list[Delivery]:
        at = self._now(now)

        def dead_letter_target(one: Loaded) -> list[QueueKey]:
            rule = one.record.config.dead_letter
            return [] if rule is None else [rule.target]

        done = await self._p.steps.run(
            key,
            lambda model: model.receive(
                key,
                max_messages=max_messages,
                visibility_timeout=visibility_timeout,
                now=at,
                attempt_id=attempt_id,
            ),
            now=at,
            others=dead_letter_target,
            absorb=max_messages,
        )
        return await self._delivered(done.result, done)

    async def delete(
        self,
        key: QueueKey,
        receipts: Sequence[Receipt],
        *,
        refuse_expired: bool,
        now: float | None,
    ) -> list[ReceiptResult]:
        at = self._now(now)
        results = (
            await self._p.steps.run(
                key,
                lambda model: model.delete(key, receipts, refuse_expired=refuse_expired, now=at),
                now=at,
            )
        ).result
        return results

    async def change_visibility(
        self,
        key: QueueKey,
        changes: Sequence[VisibilityChange],
        *,
        refuse_expired: bool,
        now: float | None,
        max_total: float | None = None,
    ) -> list[ReceiptResult]:
        at = self._now(now)
        results = (
            await self._p.steps.run(
                key,
                lambda model: model.change_visibility(
                    key, changes, refuse_expired=refuse_expired, now=at, max_total=max_total
                ),
                now=at,
            )
        ).result
        return results

    async def purge(self, key: QueueKey, *, now: float | None) -> int:
        at = self._now(now)
        found = await self._p.records.find(key)
        if found is None:
            raise QueueNotFound(key)
        incarnation = found[1]
        # The backlog up to its last entry now goes; what is sent after it stays.
        last = await self._p.backlog.last(incarnation)
        waiting = await self._backlog_waiting(key)

        def skip(one: Loaded) -> None:
            one.ledger.cursor = max(one.ledger.cursor, last)

        async def op(model: LedgerStore) -> int:
            return await model.purge(key, now=at)

        done = await self._p.steps.run(key, op, now=at, after=skip)
        await self._p.backlog.drop(incarnation, below=last + 1)
        if found[0].config.fifo:
            # AWS: a FIFO queue's deduplication window goes with its messages.
            await self._p.fifo.windows.forget(incarnation)
        return done.result + waiting

    async def last_purged_at(self, key: QueueKey) -> float | None:
        at = self._now(None)
        op = lambda model: model.last_purged_at(key)  # noqa: E731
        done: Done[float | None] = await self._p.steps.run(key, op, now=at, write=False)
        return done.result

    async def stats(self, key: QueueKey, *, now: float | None) -> QueueStats:
        at = self._now(now)
        quick = await self._p.quiet.stats(self._p.records, key, at, self._clock)
        if quick is not None:  # known empty (quiet.py): nothing read
            return quick
        seen: list[Loaded] = []
        done = await self._p.steps.run(
            key,
            lambda model: model.stats(key, now=at),
            now=at,
            write=False,
            absorb=STATS_VIEW,
            after=seen.append,
        )
        stats = done.result
        if done.waiting is None:  # the ledger had enough receivable: it did not look
            waiting = await self._backlog_waiting(key)
        else:
            waiting = done.waiting
            self._p.quiet.saw(seen[-1], waiting)
        return dataclasses.replace(stats, visible=stats.visible + waiting)

    async def count_in_flight(self, key: QueueKey, *, now: float | None) -> int:
        at = self._now(now)
        op = lambda model: model.count_in_flight(key, now=at)  # noqa: E731
        done: Done[int] = await self._p.steps.run(key, op, now=at, write=False)
        return done.result

    async def next_visible_at(self, key: QueueKey, *, now: float | None) -> float | None:
        at = self._now(now)
        upcoming = (
            await self._p.steps.run(
                key,
                lambda model: model.next_visible_at(key, now=at),
                now=at,
                write=False,
                absorb=STATS_VIEW,
            )
        ).result
        return upcoming

    async def _backlog_waiting(self, key: QueueKey) -> int:
        """How many entries wait in the queue's backlog beyond its ledger's cursor."""
        loaded = await self._p.steps.load(key, take=False)
        if loaded is None:
            raise QueueNotFound(key)
        return await self._p.backlog.waiting(loaded.incarnation, loaded.ledger.cursor)

    # --- operators (metrics and the dashboard) ------------------------------------------

    async def peek(self, key: QueueKey, *, limit: int, now: float | None) -> list[PeekedMessage]:
        at = self._now(now)
        done = await self._p.steps.run(
            key,
            lambda model: model.peek(key, limit=limit, now=at),
            now=at,
            write=False,
            absorb=limit,
        )
        return [
            dataclasses.replace(p, message=await self._p.bodies.filled(p.message, done.bodies))
            for p in done.result
        ]

    async def discard(self, key: QueueKey, message_id: str, *, now: float | None) -> bool:
        at = self._now(now)
        # The step drops its body from the stream once the ledger no longer names it.
        done = await self._p.steps.run(
            key, lambda model: model.discard(key, message_id, now=at), now=at, absorb=STATS_VIEW
        )
        return done.result

    def dead_lettered(self) -> Mapping[QueueKey, int]:
        return {} if self._parts is None else dict(self._parts.steps.dead_lettered)

    # --- retention ------------------------------------------------------------------

    async def sweep_expired(self, *, limit: int, now: float | None) -> int:
        return await self._sweeps.sweep(self._p.steps, self._p.records, limit, self._now(now))

    # --- message move tasks -----------------------------------------------------------

    async def move_messages(
        self, source: QueueKey, destination: QueueKey | None, *, limit: int, now: float | None
    ) -> int:
        at = self._now(now)

        def targets(one: Loaded) -> Iterable[QueueKey]:
            if destination is not None:
                return [destination]
            origins = (m.stored.dead_letter_source for m in one.ledger.queue.messages.values())
            return sorted({origin for origin in origins if origin is not None})

        moved = (
            await self._p.steps.run(
                source,
                lambda model: model.move_messages(source, destination, limit=limit, now=at),
                now=at,
                others=targets,
                absorb=limit,
            )
        ).result
        return moved

    async def create_move_task(self, task: MoveTask) -> bool:
        return await self._p.tasks.create(task)

    async def get_move_task(self, task_id: str) -> MoveTask | None:
        return await self._p.tasks.get(task_id)

    async def list_move_tasks(self, source: QueueKey, *, limit: int) -> list[MoveTask]:
        return await self._p.tasks.of_source(source, limit=limit)

    async def cancel_move_task(self, task_id: str) -> MoveTask | None:
        return await self._p.tasks.cancel(task_id)

    async def advance_move_task(
        self,
        task_id: str,
        *,
        moved: int,
        lease_until: float,
        finish: MoveTaskStatus | None = None,
        failure_reason: str | None = None,
    ) -> MoveTask | None:
        return await self._p.tasks.advance(
            task_id,
            moved=moved,
            lease_until=lease_until,
            finish=finish,
            failure_reason=failure_reason,
        )

    async def claim_move_tasks(self, *, lease_until: float, now: float | None) -> list[MoveTask]:
        return await self._p.tasks.claim(lease_until=lease_until, now=self._now(now))

    # --- dispatch slots ---------------------------------------------------------------

    async def take_dispatch_slot(
        self, key: QueueKey, *, holder: str, slots: int, lease: float, now: float | None
    ) -> int | None:
        return await self._p.slots.take(
            key, holder=holder, slots=slots, lease=lease, at=self._now(now)
        )

    async def give_back_dispatch_slot(self, key: QueueKey, *, holder: str, slot: int) -> None:
        await self._p.slots.give_back(key, holder=holder, slot=slot)
