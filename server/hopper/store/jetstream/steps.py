"""The step: read the ledgers an operation touches, apply the reference model's rules
(`store/memory.py`) to them, and write back what changed with compare-and-set on the
revisions read. A lost race is retried from a fresh read, so each decision is atomic
across processes."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Generic, TypeVar

from hopper.core import limits
from hopper.core.clock import Clock
from hopper.core.errors import QueueNotFound, StoreUnavailable
from hopper.core.model import QueueKey, QueueRecord
from hopper.store.jetstream import codec, edge
from hopper.store.jetstream.bodies import Bodies
from hopper.store.jetstream.records import MAX_ROUNDS, Records
from hopper.store.memory import MemoryQueueStore

log = logging.getLogger("hopper.jetstream")

T = TypeVar("T")


class PendingTokens:
    """The model's token sequence within one step: -1, -2, ... (see codec.token)."""

    def __init__(self) -> None:
        self.drawn = 0

    def __iter__(self) -> PendingTokens:
        return self

    def __next__(self) -> int:
        if self.drawn >= codec.TOKENS_PER_WRITE:
            raise RuntimeError("more deliveries in one step than tokens per write")
        self.drawn += 1
        return -self.drawn


@dataclasses.dataclass
class Done(Generic[T]):
    """A step's result, the body sequence of every message it saw, and the revision of
    the main ledger's write (None when it wrote nothing), which resolves its tokens."""

    result: T
    bodies: dict[str, int]
    revision: int | None = None


@dataclasses.dataclass
class Loaded:
    """One queue as read for a step: its record, ledger, and what compare-and-set needs."""

    record: QueueRecord
    incarnation: str
    ledger: codec.Ledger
    raw: bytes | None
    revision: int


class Steps:
    def __init__(self, res: edge.Resources, records: Records, bodies: Bodies, clock: Clock):
        self._kv = res.ledgers
        self._records = records
        self._bodies = bodies
        self._clock = clock
        self.dead_lettered: Counter[QueueKey] = Counter()

    async def load(self, key: QueueKey) -> Loaded | None:
        found = await self._records.find(key)
        if found is None:
            return None
        record, incarnation, _ = found
        raw, revision = await edge.get(self._kv, incarnation)
        data = codec.unpack(raw)
        ledger = codec.decode_ledger(data, record, revision)
        return Loaded(record, incarnation, ledger, data, revision)

    async def run(
        self,
        key: QueueKey,
        op: Callable[[MemoryQueueStore], Awaitable[T]],
        *,
        now: float,
        others: Callable[[Loaded], Iterable[QueueKey]] = lambda _: (),
        new_bodies: Mapping[str, int] | None = None,
        write: bool = True,
    ) -> Done[T]:
        """Run `op` on the model holding `key`'s queue (and the queues `others` names,
        read after it) and write every changed ledger back, atomically per ledger;
        retried from a fresh read when another process changed one in between."""
        for round_ in range(MAX_ROUNDS):
            main = await self.load(key)
            if main is None:
                raise QueueNotFound(key)
            loaded = {key: main}
            for other in others(main):
                if other not in loaded:
                    extra = await self.load(other)
                    if extra is not None:
                        loaded[other] = extra
            model = self._model(loaded)
            result = await op(model)
            bodies = dict(new_bodies or {})
            for one in loaded.values():
                bodies.update(one.ledger.bodies)
            if not write:
                return Done(result, bodies)
            try:
                revision = await self._commit(key, loaded, new_bodies or {}, now)
            except edge.Conflict:
                await asyncio.sleep(random.uniform(0, 0.002 * min(round_, 10)))
                continue
            self.dead_lettered.update(model._dead_lettered)
            return Done(result, bodies, revision)
        raise StoreUnavailable("JetStream: too much contention on a queue's ledger")

    def _model(self, loaded: Mapping[QueueKey, Loaded]) -> MemoryQueueStore:
        model = MemoryQueueStore(self._clock)
        for key, one in loaded.items():
            model._queues[key] = one.ledger.queue
        # The model only ever calls next() on its token sequence.
        model._tokens = PendingTokens()  # type: ignore[assignment]
        return model

    async def _commit(
        self,
        key: QueueKey,
        loaded: Mapping[QueueKey, Loaded],
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
        written: list[tuple[Loaded, int]] = []
        main = None
        try:
            for queue_key, one, data in writes:
                revision = await edge.put(self._kv, one.incarnation, codec.pack(data), one.revision)
                written.append((one, revision))
                main = revision if queue_key == key else main
        except edge.Conflict:
            await self._undo(written)
            raise
        after = {seq for one in loaded.values() for seq in one.ledger.bodies.values()}
        if writes:
            await self._bodies.drop(before - after)
        return main

    async def _undo(self, written: list[tuple[Loaded, int]]) -> None:
        """Put back ledgers a half-done step wrote, where nobody changed them since."""
        for one, revision in written:
            try:
                await edge.put(self._kv, one.incarnation, codec.pack(one.raw or b""), revision)
            except (edge.Conflict, StoreUnavailable) as error:
                log.warning("hopper: could not undo a half-done step (%s): a duplicate", error)
