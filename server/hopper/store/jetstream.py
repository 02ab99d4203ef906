"""JetStreamQueueStore: the QueueStore contract on NATS JetStream.

The mapping:

- A message's body (with its attributes and trace header) is one message of the stream
  `<PREFIX>_BODIES`, published once when sent and deleted when the message leaves the
  queue. Its stream sequence names it.
- A queue's record (config, tags, incarnation) is an entry of the key-value bucket
  `<prefix>_queues`; created with create-if-absent, changed with compare-and-set on its
  revision. Deletion times and the move tasks live there too (the tasks as one entry,
  changed by compare-and-set, so "one active task per source" holds across processes).
- A queue's per-message state -- leases, fencing tokens, receive counts, FIFO sequence
  numbers and deduplication windows, live deduplication keys, receive attempts -- is its
  *ledger*: one entry of the bucket `<prefix>_ledgers`, keyed by the queue's incarnation.
  Every operation reads the ledgers it touches, applies the reference model's rules
  (`store/memory.py`: each SQS rule written once) and writes them back with
  compare-and-set on the revisions it read; a lost race is retried from a fresh read. So
  every decision (claim, redrive, group lock, token issue, deduplication) is atomic
  across any number of hopper processes, and time is hopper's `now`, which is what lets
  the contract suite run this store under a fake clock.
- The fencing token is a counter in the ledger, incremented by the compare-and-set that
  claims the delivery; a message moved to another queue raises that queue's counter to
  at least its own, so its tokens only grow.
- Wake-ups: every process watches the ledger bucket (headers only); a changed ledger
  wakes that queue's long polls. JetStream carries the wake-up between processes.

Where the seed's mapping does not fit, and why:

- AckWait/InProgress/Nak as visibility: a consumer has one AckWait, but SQS has one
  visibility timeout per receive and per ChangeMessageVisibility (up to 12 hours), zero
  leases, and time that is a parameter. Leases are therefore ledger state.
- Consumer sequence as fencing token: it lives only as long as one consumer, and a
  dead-lettered or moved message gets a new one in another stream; the ledger counter
  keeps tokens increasing across both.
- Nats-Msg-Id: its duplicate window is the server's wall clock and fixed per stream; the
  FIFO window (300 s from the first send, even after deletion) and hopper's live keys are
  ledger state.
- MaxDeliver: redrive must move the message to another queue at the receive that would
  exceed it, keeping id, body and counts; done in the same step as the claim.
- FIFO group locks: no primitive; the ledger write that claims a group's run is the lock.

Limits (declared, not silent): a queue's ledger is one key-value entry, so a queue holds
at most `MAX_QUEUE_DEPTH` messages (sends beyond are refused as at hopper's depth ceiling);
nats-server's `max_payload` must exceed 1 MiB plus that ledger (8 MB is plenty). Two
ledgers written by one step (a redrive, a move) are two compare-and-sets: the target is
written first, so a lost race afterwards can duplicate a message (at-least-once) but not
lose one.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
import uuid
from collections import Counter, OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, Generic, TypeVar

from hopper.core import limits
from hopper.core.clock import Clock, SystemClock
from hopper.core.errors import QueueNotFound, StoreUnavailable
from hopper.core.model import (
    Delivery,
    MessageAttribute,
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
from hopper.store import jetstream_edge as edge
from hopper.store import ledger as codec
from hopper.store.base import WakeUp
from hopper.store.memory import MemoryQueueStore

log = logging.getLogger("hopper.jetstream")

T = TypeVar("T")

# A queue's ledger is one entry: it holds this many messages at most.
MAX_QUEUE_DEPTH = 10_000
# Compare-and-set rounds before an operation gives up as unavailable (a hot queue under
# many processes loses some rounds; this many means something is wrong).
MAX_ROUNDS = 64
# Bodies kept in process memory (bodies never change, so any process may cache them).
BODY_CACHE_SIZE = 20_000
TASKS_KEY = "tasks"


class _PendingTokens:
    """The model's token sequence within one step: -1, -2, ... (see ledger.token)."""

    def __init__(self) -> None:
        self.drawn = 0

    def __iter__(self) -> _PendingTokens:
        return self

    def __next__(self) -> int:
        if self.drawn >= codec.TOKENS_PER_WRITE:
            raise RuntimeError("more deliveries in one step than tokens per write")
        self.drawn += 1
        return -self.drawn


@dataclasses.dataclass
class _Done(Generic[T]):
    """A step's result, the body sequence of every message it saw, and the revision of
    the main ledger's write (None when it wrote nothing), which resolves its tokens."""

    result: T
    bodies: dict[str, int]
    revision: int | None = None


@dataclasses.dataclass
class _Loaded:
    """One queue as read for a step: its record, ledger, and what compare-and-set needs."""

    record: QueueRecord
    incarnation: str
    ledger: codec.Ledger
    raw: bytes | None
    revision: int


def _record_key(key: QueueKey) -> str:
    return f"q.{key.account}.{key.name}"


def _deleted_key(key: QueueKey) -> str:
    return f"d.{key.account}.{key.name}"


class JetStreamQueueStore:
    def __init__(
        self,
        urls: Sequence[str],
        *,
        replicas: int = 1,
        prefix: str = "hopper",
        clock: Clock | None = None,
    ) -> None:
        self._urls = list(urls)
        self._replicas = replicas
        self._prefix = prefix
        self._clock: Clock = clock or SystemClock()
        self._res: edge.Resources | None = None
        self._watcher: Any = None
        self._watch_task: asyncio.Task[None] | None = None
        self._wake: WakeUp | None = None
        # incarnation -> queue, for the wake-ups of queues this process has touched
        self._incarnations: dict[str, QueueKey] = {}
        self._bodies: OrderedDict[int, tuple[str, Mapping[str, MessageAttribute], str | None]]
        self._bodies = OrderedDict()
        self._dead_lettered: Counter[QueueKey] = Counter()

    def _now(self, now: float | None) -> float:
        return self._clock.time() if now is None else now

    @property
    def _r(self) -> edge.Resources:
        if self._res is None:
            raise StoreUnavailable("the store is not started")
        return self._res

    # --- life cycle -----------------------------------------------------------------

    async def start(self, wake: WakeUp) -> None:
        self._res = await edge.connect(self._urls, replicas=self._replicas, prefix=self._prefix)
        self._wake = wake
        with edge.translated():
            self._watcher = await self._res.ledgers.watch(">", meta_only=True)
        self._watch_task = asyncio.create_task(self._watch_ledgers())

    async def _watch_ledgers(self) -> None:
        """A ledger changed somewhere: its queue's waiters look again."""
        async for entry in self._watcher:
            if entry is None or self._wake is None:
                continue
            key = self._incarnations.get(entry.key)
            if key is not None:
                self._wake(key, None)

    async def close(self) -> None:
        self._wake = None
        if self._watch_task is not None:
            self._watch_task.cancel()
            self._watch_task = None
        res, self._res = self._res, None
        if res is not None:
            try:
                await res.nc.close()
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
        for _ in range(MAX_ROUNDS):
            raw, revision = await edge.get(self._r.queues, _record_key(key))
            if raw is not None:
                return codec.decode_record(raw)[0], False
            value = codec.encode_record(record, uuid.uuid4().hex)
            try:
                await edge.put(self._r.queues, _record_key(key), value, revision)
            except edge.Conflict:
                continue
            return record, True
        raise StoreUnavailable("JetStream: too much contention creating a queue")

    async def _record(self, key: QueueKey) -> tuple[QueueRecord, str, int] | None:
        raw, revision = await edge.get(self._r.queues, _record_key(key))
        if raw is None:
            return None
        record, incarnation = codec.decode_record(raw)
        self._incarnations[incarnation] = key
        return record, incarnation, revision

    async def get_queue(self, key: QueueKey) -> QueueRecord | None:
        found = await self._record(key)
        return None if found is None else found[0]

    async def _records(self, pattern: str) -> list[QueueRecord]:
        found = await edge.scan(self._r.queues, pattern)
        return [codec.decode_record(value)[0] for key, value in found if key.startswith("q.")]

    async def list_queues(
        self, account: str, *, prefix: str = "", after: str | None = None, limit: int = 1000
    ) -> list[QueueRecord]:
        records = [
            r
            for r in await self._records(f"q.{account}.>")
            if r.key.name.startswith(prefix) and (after is None or r.key.name > after)
        ]
        return sorted(records, key=lambda r: r.key.name)[:limit]

    async def _change_record(
        self, key: QueueKey, change: Callable[[QueueRecord], QueueRecord]
    ) -> QueueRecord:
        for _ in range(MAX_ROUNDS):
            found = await self._record(key)
            if found is None:
                raise QueueNotFound(key)
            record, incarnation, revision = found
            record = change(record)
            value = codec.encode_record(record, incarnation)
            try:
                await edge.put(self._r.queues, _record_key(key), value, revision)
            except edge.Conflict:
                continue
            return record
        raise StoreUnavailable("JetStream: too much contention changing a queue")

    async def update_queue(
        self, key: QueueKey, config: QueueConfig, *, now: float | None
    ) -> QueueRecord:
        at = self._now(now)
        return await self._change_record(
            key, lambda r: dataclasses.replace(r, config=config, last_modified_at=at)
        )

    async def delete_queue(self, key: QueueKey, *, now: float | None) -> float | None:
        at = self._now(now)
        for _ in range(MAX_ROUNDS):
            found = await self._record(key)
            if found is None:
                return None
            _, incarnation, revision = found
            try:
                await edge.remove(self._r.queues, _record_key(key), revision)
            except edge.Conflict:
                continue
            break
        else:
            raise StoreUnavailable("JetStream: too much contention deleting a queue")
        with edge.translated():
            await self._r.queues.put(_deleted_key(key), str(at).encode())
        # The incarnation is gone with the record: its ledger and bodies are garbage now.
        raw, revision = await edge.get(self._r.ledgers, incarnation)
        data = codec.unpack(raw)
        if data is not None:
            ledger = codec.decode_ledger(data, found[0], revision)
            await self._drop_bodies(ledger.bodies.values())
            with edge.translated():
                await self._r.ledgers.purge(incarnation)
        return at

    async def last_deleted_at(self, key: QueueKey) -> float | None:
        raw, _ = await edge.get(self._r.queues, _deleted_key(key))
        return None if raw is None else float(raw)

    async def set_tags(
        self, key: QueueKey, *, add: Mapping[str, str], remove: Sequence[str]
    ) -> QueueRecord:
        def change(record: QueueRecord) -> QueueRecord:
            tags = {**record.tags, **add}
            for tag_key in remove:
                tags.pop(tag_key, None)
            return dataclasses.replace(record, tags=tags)

        return await self._change_record(key, change)

    async def dead_letter_sources(self, target: QueueKey) -> list[QueueKey]:
        return sorted(
            (
                r.key
                for r in await self._records("q.>")
                if r.config.dead_letter is not None and r.config.dead_letter.target == target
            ),
            key=lambda key: (key.name, key.account),
        )

    async def accounts(self) -> list[str]:
        return sorted({r.key.account for r in await self._records("q.>")})

    # --- the step: read ledgers, apply the model, compare-and-set them back -------------

    async def _load(self, key: QueueKey) -> _Loaded | None:
        found = await self._record(key)
        if found is None:
            return None
        record, incarnation, _ = found
        raw, revision = await edge.get(self._r.ledgers, incarnation)
        data = codec.unpack(raw)
        ledger = codec.decode_ledger(data, record, revision)
        return _Loaded(record, incarnation, ledger, data, revision)

    async def _step(
        self,
        key: QueueKey,
        op: Callable[[MemoryQueueStore], Awaitable[T]],
        *,
        now: float,
        others: Callable[[_Loaded], Iterable[QueueKey]] = lambda _: (),
        new_bodies: Mapping[str, int] | None = None,
        write: bool = True,
    ) -> _Done[T]:
        """Run `op` on the model holding `key`'s queue (and the queues `others` names,
        read after it) and write every changed ledger back, atomically per ledger;
        retried from a fresh read when another process changed one in between."""
        for round_ in range(MAX_ROUNDS):
            main = await self._load(key)
            if main is None:
                raise QueueNotFound(key)
            loaded = {key: main}
            for other in others(main):
                if other not in loaded:
                    extra = await self._load(other)
                    if extra is not None:
                        loaded[other] = extra
            model = self._model(loaded)
            result = await op(model)
            bodies = dict(new_bodies or {})
            for one in loaded.values():
                bodies.update(one.ledger.bodies)
            if not write:
                return _Done(result, bodies)
            try:
                revision = await self._commit(key, loaded, new_bodies or {}, now)
            except edge.Conflict:
                await asyncio.sleep(random.uniform(0, 0.002 * min(round_, 10)))
                continue
            for source, count in model._dead_lettered.items():
                self._dead_lettered[source] += count
            return _Done(result, bodies, revision)
        raise StoreUnavailable("JetStream: too much contention on a queue's ledger")

    def _model(self, loaded: Mapping[QueueKey, _Loaded]) -> MemoryQueueStore:
        model = MemoryQueueStore(self._clock)
        for key, one in loaded.items():
            model._queues[key] = one.ledger.queue
        model._tokens = _PendingTokens()  # type: ignore[assignment]  # the model only calls next()
        return model

    async def _commit(
        self,
        key: QueueKey,
        loaded: Mapping[QueueKey, _Loaded],
        new_bodies: Mapping[str, int],
        now: float,
    ) -> int | None:
        """Write the changed ledgers; the main ledger's new revision, if it changed."""
        bodies: dict[str, int] = dict(new_bodies)
        for one in loaded.values():
            bodies.update(one.ledger.bodies)
        before = set(bodies.values()) - set(new_bodies.values())
        writes = []
        for queue_key, one in loaded.items():
            ledger = one.ledger
            ledger.bodies = {mid: bodies[mid] for mid in ledger.queue.messages}
            data = codec.encode_ledger(ledger, window=limits.DEDUPLICATION_WINDOW_SECONDS, now=now)
            if data != one.raw:
                writes.append((queue_key, one, data))
        # The main queue last: what a step moves arrives before it leaves.
        writes.sort(key=lambda w: w[0] == key)
        written: list[tuple[_Loaded, int]] = []
        main = None
        try:
            for queue_key, one, data in writes:
                revision = await edge.put(
                    self._r.ledgers, one.incarnation, codec.pack(data), one.revision
                )
                written.append((one, revision))
                main = revision if queue_key == key else main
        except edge.Conflict:
            await self._undo(written)
            raise
        after = {seq for one in loaded.values() for seq in one.ledger.bodies.values()}
        if writes:
            await self._drop_bodies(before - after)
        return main

    async def _undo(self, written: list[tuple[_Loaded, int]]) -> None:
        """Put back ledgers a half-done step wrote, where nobody changed them since."""
        for one, revision in written:
            try:
                await edge.put(
                    self._r.ledgers,
                    one.incarnation,
                    codec.pack(one.raw or b""),
                    revision,
                )
            except (edge.Conflict, StoreUnavailable) as error:
                log.warning("hopper: could not undo a half-done step (%s): a duplicate", error)

    # --- bodies -----------------------------------------------------------------------

    async def _publish_bodies(self, stored: Sequence[StoredMessage]) -> dict[str, int]:
        res = self._r

        async def one(message: StoredMessage) -> tuple[str, int]:
            with edge.translated():
                ack = await res.js.publish(
                    res.body_subject,
                    codec.encode_body(message),
                    stream=res.body_stream,
                    headers={"Nats-Msg-Id": message.id},
                )
            self._cache(ack.seq, (message.body, message.attributes, message.trace_header))
            return message.id, ack.seq

        return dict(await asyncio.gather(*(one(m) for m in stored)))

    def _cache(
        self, seq: int, body: tuple[str, Mapping[str, MessageAttribute], str | None]
    ) -> None:
        self._bodies[seq] = body
        if len(self._bodies) > BODY_CACHE_SIZE:
            self._bodies.popitem(last=False)

    async def _body(self, seq: int) -> tuple[str, Mapping[str, MessageAttribute], str | None]:
        cached = self._bodies.get(seq)
        if cached is not None:
            return cached
        res = self._r
        with edge.translated():
            raw = await res.js.get_msg(res.body_stream, seq)
        body = codec.decode_body(raw.data or b"{}")
        self._cache(seq, body)
        return body

    async def _drop_bodies(self, seqs: Iterable[int]) -> None:
        res = self._r
        for seq in seqs:
            self._bodies.pop(seq, None)
            try:
                with edge.translated():
                    await res.js.delete_msg(res.body_stream, seq)
            except StoreUnavailable as error:
                # An orphaned body costs space until the stream's max age, never a message.
                log.debug("hopper: body %s not deleted: %s", seq, error)

    async def _filled(self, stored: StoredMessage, bodies: Mapping[str, int]) -> StoredMessage:
        seq = bodies.get(stored.id)
        if seq is None:
            return stored
        body, attributes, trace = await self._body(seq)
        return dataclasses.replace(stored, body=body, attributes=attributes, trace_header=trace)

    async def _delivered(self, deliveries: Sequence[Delivery], done: _Done[Any]) -> list[Delivery]:
        """Deliveries as they leave the store: bodies filled in, tokens resolved."""
        return [
            dataclasses.replace(
                d,
                message=await self._filled(d.message, done.bodies),
                token=codec.token(d.token, done.revision or 0),
            )
            for d in deliveries
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
        # Bodies go first: the ledger write that names them is the send's commit point,
        # so a process dying in between leaves an orphaned body, never a lost message.
        stored = [
            StoredMessage(m.id, m.body, m.attributes, m.trace_header, sent_at=at) for m in messages
        ]
        published = await self._publish_bodies(stored)

        async def op(model: MemoryQueueStore) -> list[SendResult]:
            depth = len(model._queues[key].messages)
            ceiling, sent = max_depth, messages
            if (max_depth or MAX_QUEUE_DEPTH) >= MAX_QUEUE_DEPTH and (
                depth + len(messages) > MAX_QUEUE_DEPTH
            ):
                # The ledger's own ceiling; a message refused here is no hand-off.
                ceiling = MAX_QUEUE_DEPTH
                sent = [dataclasses.replace(m, lease=None) for m in messages]
            return await model.send(key, sent, now=at, max_depth=ceiling)

        try:
            done = await self._step(key, op, now=at, new_bodies=published)
            results = done.result
        except BaseException:
            await self._drop_bodies(published.values())
            raise
        unused = [
            published[m.id]
            for m, r in zip(messages, results, strict=True)
            if r.duplicate or r.refused
        ]
        await self._drop_bodies(unused)
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

        def dead_letter_target(one: _Loaded) -> list[QueueKey]:
            rule = one.record.config.dead_letter
            return [] if rule is None else [rule.target]

        done = await self._step(
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
            await self._step(
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
            await self._step(
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
        count = (await self._step(key, lambda model: model.purge(key, now=at), now=at)).result
        return count

    async def last_purged_at(self, key: QueueKey) -> float | None:
        at = self._now(None)
        purged = (
            await self._step(key, lambda model: model.last_purged_at(key), now=at, write=False)
        ).result
        return purged

    async def stats(self, key: QueueKey, *, now: float | None) -> QueueStats:
        at = self._now(now)
        stats = (
            await self._step(key, lambda model: model.stats(key, now=at), now=at, write=False)
        ).result
        return stats

    async def next_visible_at(self, key: QueueKey, *, now: float | None) -> float | None:
        at = self._now(now)
        upcoming = (
            await self._step(
                key, lambda model: model.next_visible_at(key, now=at), now=at, write=False
            )
        ).result
        return upcoming

    # --- operators (metrics and the dashboard) ------------------------------------------

    async def peek(self, key: QueueKey, *, limit: int, now: float | None) -> list[PeekedMessage]:
        at = self._now(now)
        done = await self._step(
            key, lambda model: model.peek(key, limit=limit, now=at), now=at, write=False
        )
        return [
            dataclasses.replace(p, message=await self._filled(p.message, done.bodies))
            for p in done.result
        ]

    def dead_lettered(self) -> Mapping[QueueKey, int]:
        return dict(self._dead_lettered)

    # --- retention ------------------------------------------------------------------

    async def sweep_expired(self, *, limit: int, now: float | None) -> int:
        at = self._now(now)
        swept = 0
        for record in await self._records("q.>"):
            if swept >= limit:
                break
            left = limit - swept

            async def sweep(model: MemoryQueueStore, left: int = left) -> int:
                return await model.sweep_expired(limit=left, now=at)

            try:
                count = (await self._step(record.key, sweep, now=at)).result
            except QueueNotFound:  # deleted since the scan
                continue
            swept += count
        return swept

    # --- message move tasks -----------------------------------------------------------

    async def move_messages(
        self, source: QueueKey, destination: QueueKey | None, *, limit: int, now: float | None
    ) -> int:
        at = self._now(now)

        def targets(one: _Loaded) -> Iterable[QueueKey]:
            if destination is not None:
                return [destination]
            origins = (m.stored.dead_letter_source for m in one.ledger.queue.messages.values())
            return sorted({origin for origin in origins if origin is not None})

        moved = (
            await self._step(
                source,
                lambda model: model.move_messages(source, destination, limit=limit, now=at),
                now=at,
                others=targets,
            )
        ).result
        return moved

    async def _tasks_step(
        self, op: Callable[[MemoryQueueStore], Awaitable[T]], *, write: bool = True
    ) -> T:
        """Run `op` on the model holding every move task; write them back by
        compare-and-set when it changed them."""
        for _ in range(MAX_ROUNDS):
            raw, revision = await edge.get(self._r.queues, TASKS_KEY)
            model = MemoryQueueStore(self._clock)
            model._move_tasks = codec.decode_tasks(raw)
            result = await op(model)
            data = codec.encode_tasks(model._move_tasks)
            if not write or data == (raw or b"[]"):
                return result
            try:
                await edge.put(self._r.queues, TASKS_KEY, data, revision)
            except edge.Conflict:
                continue
            return result
        raise StoreUnavailable("JetStream: too much contention on the move tasks")

    async def create_move_task(self, task: MoveTask) -> bool:
        return await self._tasks_step(lambda model: model.create_move_task(task))

    async def get_move_task(self, task_id: str) -> MoveTask | None:
        return await self._tasks_step(lambda model: model.get_move_task(task_id), write=False)

    async def list_move_tasks(self, source: QueueKey, *, limit: int) -> list[MoveTask]:
        return await self._tasks_step(
            lambda model: model.list_move_tasks(source, limit=limit), write=False
        )

    async def cancel_move_task(self, task_id: str) -> MoveTask | None:
        return await self._tasks_step(lambda model: model.cancel_move_task(task_id))

    async def advance_move_task(
        self,
        task_id: str,
        *,
        moved: int,
        lease_until: float,
        finish: MoveTaskStatus | None = None,
        failure_reason: str | None = None,
    ) -> MoveTask | None:
        return await self._tasks_step(
            lambda model: model.advance_move_task(
                task_id,
                moved=moved,
                lease_until=lease_until,
                finish=finish,
                failure_reason=failure_reason,
            )
        )

    async def claim_move_tasks(self, *, lease_until: float, now: float | None) -> list[MoveTask]:
        at = self._now(now)
        return await self._tasks_step(
            lambda model: model.claim_move_tasks(lease_until=lease_until, now=at)
        )
