"""The step: read the ledgers an operation touches, apply the ledger's rules
(`store/ledger/rules.py`, on the ledger model of `store/ledger/`) to them, and write back
what changed with compare-and-set on the revisions read. A lost race is retried from a
fresh read, so each decision is atomic across processes."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import logging
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, Generic, TypeVar

from hopper.core import limits
from hopper.core.clock import Clock
from hopper.core.errors import QueueError, QueueNotFound, StoreUnavailable
from hopper.core.model import QueueKey, QueueRecord
from hopper.core.rounds import Regather
from hopper.store.jetstream import codec, edge
from hopper.store.jetstream.backlog import Backlog
from hopper.store.jetstream.bodies import Bodies
from hopper.store.jetstream.records import MAX_ROUNDS, Records
from hopper.store.ledger import Message, Queue, fifo_runs
from hopper.store.ledger.rules import LedgerStore

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
    # How many backlog entries wait beyond what the step saw (None: it did not look).
    waiting: int | None = None


@dataclasses.dataclass
class Loaded:
    """One queue as read for a step: its record, ledger, and what compare-and-set needs."""

    record: QueueRecord
    incarnation: str
    ledger: codec.Ledger
    raw: bytes | None
    revision: int
    # False: read from this process's memory, not yet checked against JetStream
    verified: bool = True
    # `raw` is what this process wrote, with the tokens of its deliveries pending, which
    # `ledger` holds resolved: the two differ though nothing changed since (`_keep`).
    pending: bool = False


# Steps committed together at most: each claims up to 10 deliveries, and one write has
# codec.TOKENS_PER_WRITE tokens to give.
GROUP_SIZE = 64
# After a group commit of this many steps or more, the queue's next waits for their
# callers to be back (core/rounds.py). 16 clients draining through HTTP alternated groups
# of 15 steps and of one (the step that came in while the 15 were committed): two ledger
# writes for what one carries. Small groups (a few long polls woken) never wait.
REGATHER_MIN_STEPS = 4
# A step that wants receivable messages and finds too few in the ledger takes at least
# this many from the backlog (one read), so a drain reads the backlog once per
# PREFETCH messages rather than once per receive. Not more: every write re-encodes what
# was read ahead (200 wrote 3.5 KB a ledger in a 16-client drain, 100 wrote 1.7 KB).
PREFETCH = 100
# The ledger takes no more from the backlog while it holds this many messages (in
# flight, delayed, or not yet received): it stays one modest key-value entry however
# deep the queue.
WINDOW = 5_000
# A fair queue's ledger takes from the backlog at every step up to this many messages.
FAIR_WINDOW = 1_000


def _floor(one: Loaded) -> int:
    """The lowest sequence of the queue's backlog its ledger may still need: the oldest
    entry a message it took from there names, else the first after its cursor."""
    ledger = one.ledger
    oldest = min(map(ledger.bodies.__getitem__, ledger.absorbed), default=None)
    return ledger.cursor + 1 if oldest is None else codec.key_seq(oldest)


def _ready(queue: Queue, now: float, wanted: int) -> int:
    """How many of the ledger's messages a receive could take now (up to `wanted`)."""
    if queue.record.config.fifo:
        return sum(1 for _ in itertools.islice(fifo_runs(queue, now, frozenset()), wanted))
    return sum(
        1 for m in queue.messages.listed() if m.visible_at <= now and not queue.expired(m, now)
    )


@dataclasses.dataclass
class _Entry:
    """One step waiting for its group's commit."""

    op: Callable[[LedgerStore], Awaitable[Any]]
    now: float
    others: Callable[[Loaded], Iterable[QueueKey]]
    new_bodies: dict[str, int]
    write: bool
    # receivable messages the step would like to see (taken from the backlog if needed)
    absorb: int = 0
    # run on the queue's ledger after the op (e.g. a purge moving the cursor)
    after: Callable[[Loaded], None] | None = None
    future: asyncio.Future[Any] = dataclasses.field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class Steps:
    def __init__(
        self,
        res: edge.Resources,
        records: Records,
        bodies: Bodies,
        backlog: Backlog,
        clock: Clock,
        window: int = WINDOW,
        changed: Callable[[QueueKey], None] = lambda _: None,
    ):
        self._kv = res.ledgers
        # told of every queue whose ledger this process wrote (sweeps.Sweeps.changed)
        self._changed = changed
        self._records = records
        self._bodies = bodies
        self._backlog = backlog
        self._window = window
        self._clock = clock
        self.dead_lettered: Counter[QueueKey] = Counter()
        # Group commit: the steps waiting per queue, and the task running each queue's.
        # incarnation -> its ledger as this process last committed it (see `load`)
        self._decoded: dict[str, Loaded] = {}
        self._waiting: dict[QueueKey, list[_Entry]] = {}
        self._leaders: dict[QueueKey, asyncio.Task[None]] = {}
        self._regather = Regather(REGATHER_MIN_STEPS)

    async def load(self, key: QueueKey, *, take: bool = True, trust: bool = False) -> Loaded | None:
        """The queue's record and ledger, or None. With `take` False (a step that
        writes nothing) a ledger this process holds decoded is shared, not taken. With
        `trust`, a ledger this process wrote last is taken without asking JetStream
        whether it is still the latest (`verified` False): its compare-and-set will say."""
        found = await self._records.find(key)
        if found is None:
            return None
        record, incarnation, _ = found
        if trust and take and incarnation in self._decoded:
            kept = self._decoded.pop(incarnation)
            kept.ledger.queue.record = record
            return dataclasses.replace(kept, record=record, verified=False)
        packed, revision = await edge.get(self._kv, incarnation)
        # The ledger as this process last wrote it, when nobody wrote since: no decode.
        cached = (self._decoded.pop if take else self._decoded.get)(incarnation, None)
        if cached is not None and cached.revision == revision:
            cached.ledger.queue.record = record  # its config may have changed alone
            return dataclasses.replace(cached, record=record)
        data = codec.unpack(packed)
        ledger = codec.decode_ledger(data, record, revision)
        return Loaded(record, incarnation, ledger, data, revision)

    def _keep(self, one: Loaded, revision: int, data: bytes | None) -> None:
        """Remember a ledger as written at `revision` (its tokens resolved), for the
        next step of this process on it. What was written (`data`) is kept as it is,
        not encoded again with the tokens resolved (a second encoding at every write
        that delivers): the next write then compares nothing and writes."""
        pending = codec.resolve(one.ledger, revision) or (one.pending and data is one.raw)
        self._decoded[one.incarnation] = Loaded(
            one.record, one.incarnation, one.ledger, data, revision, pending=pending
        )

    async def run(
        self,
        key: QueueKey,
        op: Callable[[LedgerStore], Awaitable[T]],
        *,
        now: float,
        others: Callable[[Loaded], Iterable[QueueKey]] = lambda _: (),
        new_bodies: Mapping[str, int] | None = None,
        write: bool = True,
        absorb: int = 0,
        after: Callable[[Loaded], None] | None = None,
    ) -> Done[T]:
        """Run `op` on the model holding `key`'s queue (and the queues `others` names,
        read after it) and write every changed ledger back, atomically per ledger;
        retried from a fresh read when another process changed one in between.

        Steps of one queue that arrive while one is under way are run together, one
        after the other on one model, and committed by one write (a group commit): this
        process never races itself for a ledger, and a busy queue pays one round of
        reads and writes for many operations."""
        entry: _Entry = _Entry(op, now, others, dict(new_bodies or {}), write, absorb, after)
        if not write:
            await self._run_group(key, [entry])
        else:
            waiting = self._waiting.setdefault(key, [])
            waiting.append(entry)
            self._regather.arrived(key, len(waiting))
            if key not in self._leaders:
                # A task of its own, so a caller that gives up (a long poll whose client
                # left) cancels only its own wait, never the group it is part of.
                self._leaders[key] = asyncio.create_task(self._lead(key))
        done: Done[T] = await entry.future
        return done

    def forget(self, incarnation: str) -> None:
        """The queue of this incarnation was deleted: drop what this process kept of it."""
        self._decoded.pop(incarnation, None)
        self._backlog.forget(incarnation)

    def close(self) -> None:
        """Stop running steps (the store is closing; their callers hear CancelledError)."""
        for task in list(self._leaders.values()):
            task.cancel()

    async def _lead(self, key: QueueKey) -> None:
        carried, took = 0, 0.0  # the last group's steps and how long it took
        try:
            while True:
                waiting = len(self._waiting.get(key, []))
                await self._regather.pause(key, carried, waiting, took)
                if not (group := self._waiting.pop(key, [])):
                    break
                began = time.monotonic()
                for start in range(0, len(group), GROUP_SIZE):
                    await self._run_group(key, group[start : start + GROUP_SIZE])
                carried, took = len(group), time.monotonic() - began
        finally:
            del self._leaders[key]
            # Cancelled (the store is closing), as in a pause: who waits hears it too.
            for entry in self._waiting.pop(key, []):
                entry.future.cancel()

    async def _run_group(self, key: QueueKey, group: list[_Entry]) -> None:
        """Run the group's steps in order on one model and commit them together; each
        entry's future gets its own result or error."""
        try:
            await self._attempt_group(key, group)
        except Exception as error:  # the store's own failure: every entry hears it
            for entry in group:
                if not entry.future.done():
                    entry.future.set_exception(error)
        except BaseException:  # cancelled (the store is closing): nobody is left to answer
            for entry in group:
                entry.future.cancel()
            raise

    async def _attempt_group(self, key: QueueKey, group: list[_Entry]) -> None:
        new_bodies = {mid: seq for entry in group for mid, seq in entry.new_bodies.items()}
        now = max(entry.now for entry in group)
        # What the whole group would take: sixteen receives of ten want 160 receivable
        # messages, not ten (the largest alone left all but one answered empty).
        absorb = sum(entry.absorb for entry in group)
        # FIFO queues the step moves messages into whose backlogs hold sends: taken in
        # first (see _behind_sends), once the step has found them
        behind: set[QueueKey] = set()
        for round_ in range(MAX_ROUNDS):
            writes = all(entry.write for entry in group)
            # A ledger the step adds backlog entries to is its own copy. A writing step
            # first trusts the ledger as this process left it (its write is a
            # compare-and-set): one round trip less while one process drives a queue.
            main = await self.load(key, take=writes or absorb > 0, trust=writes and round_ == 0)
            if main is None:
                raise QueueNotFound(key)
            wanted = self._window if key in behind else absorb
            waiting = await self._absorb(main, wanted, now) if wanted else None
            loaded = {key: main}
            for entry in group:
                for other in entry.others(main):
                    if other not in loaded:
                        extra = await self.load(other, take=writes)
                        if extra is not None:
                            loaded[other] = extra
                            if other in behind:
                                await self._absorb(extra, self._window, now)
            model = self._model(loaded)
            outcomes: list[tuple[bool, Any]] = []
            for entry in group:
                try:
                    outcomes.append((True, await entry.op(model)))
                except QueueError as error:  # this step's answer (the model changed nothing)
                    outcomes.append((False, error))
                if entry.after is not None:
                    entry.after(main)
            if writes and not behind:
                behind = await self._behind_sends(loaded, model.arrived())
                if behind:
                    continue  # decide again, those sends taken in first
            bodies = dict(new_bodies)
            for one in loaded.values():
                bodies.update(one.ledger.bodies)
            revision = None
            if writes:
                try:
                    revision = await self._commit(key, loaded, new_bodies, now)
                except edge.Conflict:
                    await asyncio.sleep(random.uniform(0, 0.002 * min(round_, 10)))
                    continue
                if revision is None and not main.verified and not await self._latest(main):
                    continue  # it wrote nothing, on a ledger that may be old: decide again
                self.dead_lettered.update(model.dead_lettered())
            for entry, (ok, value) in zip(group, outcomes, strict=True):
                if ok:
                    entry.future.set_result(Done(value, bodies, revision, waiting))
                else:
                    entry.future.set_exception(value)
            return
        raise StoreUnavailable("JetStream: too much contention on a queue's ledger")

    async def _behind_sends(
        self, loaded: Mapping[QueueKey, Loaded], arrived: Iterable[QueueKey]
    ) -> set[QueueKey]:
        """The FIFO queues of `arrived` (the step moved messages into them: dead
        letters, move tasks) whose backlogs hold sends their ledgers have not taken in.
        Those sends came first, and an arrival goes to the ledger's tail: ahead of
        them, unless they are taken in before it (a group's later message delivered
        before its earlier one). A backlog read each, only for a step that moves
        messages into a FIFO queue. Beyond a ledger's window (WINDOW messages held)
        its backlog is not taken in, and an arrival still goes ahead of what waits
        there."""
        behind = set()
        for key in arrived:
            one = loaded.get(key)
            if (
                one is not None
                and one.record.config.fifo
                and await self._backlog.waiting(one.incarnation, one.ledger.cursor)
            ):
                behind.add(key)
        return behind

    async def _latest(self, one: Loaded) -> bool:
        """Whether `one` is still the ledger's latest revision."""
        _, revision = await edge.get(self._kv, one.incarnation)
        return revision == one.revision

    async def _absorb(self, one: Loaded, wanted: int, now: float) -> int | None:
        """Take backlog entries into the ledger until it holds `wanted` receivable
        messages (PREFETCH more), unless its window is full; how many entries wait
        beyond (None when it did not read)."""
        ledger = one.ledger
        queue = ledger.queue
        fifo = queue.record.config.fifo
        ready = _ready(queue, now, wanted)
        # A fair queue (a standard one with group ids) ranks tenants by what they hold in
        # flight: it looks at the backlog's head at every step while its ledger is
        # modest, so a quiet tenant's new message is seen at once.
        fair = queue.grouped and not fifo and len(queue.messages) < FAIR_WINDOW
        room = self._window - len(queue.messages)
        if (ready >= wanted and not fair) or room <= 0:
            return None
        found = await self._backlog.read(
            one.incarnation, ledger.cursor, min(max(wanted - ready, PREFETCH), room)
        )
        for entry in found.entries:
            stored = entry.stored
            if fifo:  # A FIFO message's sequence number is its place in the backlog.
                stored = dataclasses.replace(stored, sequence_number=entry.key)
            queue.add(Message(stored, visible_at=entry.visible_at))
            queue.grouped = queue.grouped or stored.group_id is not None
            ledger.bodies[stored.id] = entry.key
            ledger.absorbed.add(stored.id)
        ledger.cursor = found.last
        return found.waiting

    def _model(self, loaded: Mapping[QueueKey, Loaded]) -> LedgerStore:
        model = LedgerStore(self._clock, tokens=PendingTokens())
        for key, one in loaded.items():
            model.hold(key, one.ledger.queue)
        return model

    async def _commit(
        self,
        key: QueueKey,
        loaded: Mapping[QueueKey, Loaded],
        new_bodies: Mapping[str, int],
        now: float,
    ) -> int | None:
        """Write the changed ledgers; the main ledger's new revision, if it changed."""
        # The ledger's whole is walked here at C's pace (map, set operations): what
        # Python walks is what the step changed.
        bodies: dict[str, int] = dict(new_bodies)
        for one in loaded.values():
            bodies.update(one.ledger.bodies)
        before = set(bodies.values()) - set(new_bodies.values())
        # The bodies the main queue took from its own backlog (those the trim may cover).
        taken = set(map(bodies.__getitem__, loaded[key].ledger.absorbed))
        await self._rehome(loaded, bodies)
        writes = []
        for queue_key, one in loaded.items():
            ledger = one.ledger
            ids = ledger.queue.messages.ids()
            ledger.bodies = dict(zip(ids, map(bodies.__getitem__, ids), strict=True))
            ledger.absorbed &= ledger.bodies.keys()
            data = codec.encode_ledger(ledger, window=limits.DEDUPLICATION_WINDOW_SECONDS, now=now)
            if one.pending or data != one.raw:
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
            await self._undo(written, now)
            raise
        for (queue_key, one, data), (_, revision) in zip(writes, written, strict=True):
            self._keep(one, revision, data)
            self._changed(queue_key)
        for one in loaded.values():
            if all(one is not w for _, w, _ in writes):
                self._keep(one, one.revision, one.raw)
        after = set().union(*(one.ledger.bodies.values() for one in loaded.values()))
        gone = before - after
        if writes and gone:
            # A stream message goes once no message names any body it holds: the main
            # queue's backlog entries by one trim below what its ledger still names, the
            # rest one delete each.
            named = codec.key_seqs(after)
            freed = [k for k in gone if codec.key_seq(k) not in named]
            trimmed = [k for k in freed if k in taken]
            self._bodies.evict(trimmed)
            own = loaded[key]
            lone = await self._backlog.trim(
                own.incarnation, _floor(own), trimmed, settled=not own.ledger.absorbed
            )
            await self._bodies.drop([k for k in freed if k not in taken] + lone)
        return main

    async def _rehome(self, loaded: Mapping[QueueKey, Loaded], bodies: dict[str, int]) -> None:
        """A message taken from one queue's backlog that moved to another queue (dead
        letter, move task) gets a body of its own: its old one goes with its queue's
        backlog (a purge drops the backlog subject whole)."""
        if len(loaded) < 2:  # a message moves only between two ledgers of the step
            return
        absorbed = {mid for one in loaded.values() for mid in one.ledger.absorbed}
        for one in loaded.values():
            for mid in one.ledger.queue.messages:
                if mid in absorbed and mid not in one.ledger.absorbed:
                    bodies[mid] = await self._bodies.republish(bodies[mid])

    async def _undo(self, written: list[tuple[Loaded, int]], now: float) -> None:
        """Put back ledgers a half-done step wrote, where nobody changed them since."""
        for one, revision in written:
            # What was read, its pending tokens resolved at the revision it was read at
            # (written as it was, they would resolve at the undo's own).
            data = b""
            if one.raw:
                ledger = codec.decode_ledger(one.raw, one.record, one.revision)
                window = limits.DEDUPLICATION_WINDOW_SECONDS
                data = codec.encode_ledger(ledger, window=window, now=now)
            try:
                await edge.put(self._kv, one.incarnation, codec.pack(data), revision)
            except (edge.Conflict, StoreUnavailable) as error:
                log.warning("hopper: could not undo a half-done step (%s): a duplicate", error)
