"""A queue's backlog: plain sends waiting, in order, on the queue's own subject of the
bodies stream, until a receive takes them into the ledger.

A send to a standard queue that needs no decision (no deduplication id, no lease, no
depth ceiling) is one publish here and writes no ledger: JetStream's acknowledgement is
its commit, and its stream sequence its place in line. A receive that finds too few
messages in the ledger reads the next ones after the ledger's cursor (one batched direct
get) and takes them in by the same compare-and-set that claims them, so two processes
never take one entry twice. What a receive costs therefore depends on the messages in
flight, never on how many wait behind them.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import math
import time
from collections.abc import Iterable, Sequence
from typing import NamedTuple

import nats.errors
import orjson
from nats.aio.msg import Msg

from hopper.core.errors import StoreUnavailable
from hopper.core.model import StoredMessage
from hopper.core.rounds import Regather
from hopper.store.jetstream import codec, edge
from hopper.store.jetstream.bodies import Bodies

log = logging.getLogger("hopper.jetstream")

# One read returns at most this many bytes of entries (the server ends the batch early).
READ_MAX_BYTES = 4 * 1024 * 1024
# Freed backlog bodies a queue leaves for its next trim, at most (above: deleted one by
# one, so a message held long in flight keeps no more than this many behind it). Well
# above TRIM_BATCH plus a drain's messages in flight, so a drain's purge comes first.
TRIM_WAITING = 4000
# A trim purges once this many freed bodies lie below the floor (or every one freed). A
# purge is replicated like a write: at 100, a drain purged once every 143 messages,
# and three nodes spent 2-3 us more of their CPU a drained message (bench/README.md).
TRIM_BATCH = 1000
# An entry holds a send's messages up to this many bytes of bodies and attributes (one
# SendMessageBatch fits: SQS caps its total at 1 MiB).
ENTRY_BYTES = 1024 * 1024
# After a publish that carried this many sends or more, the queue's next publish waits
# for the senders it answered to send again (core/rounds.py).
REGATHER_MIN_SENDS = 2


class Entry(NamedTuple):
    """One waiting message: its body key (codec.body_key), the message as a ledger
    holds it (its body is in the bodies' cache), when it is visible. A tuple: a frozen
    dataclass cost three times as much to make, once per message a drain reads."""

    key: int
    stored: StoredMessage
    visible_at: float


@dataclasses.dataclass
class Read:
    """What a read found: the messages, the last stream sequence read (the ledger's
    cursor once taken), and about how many messages wait beyond it."""

    entries: list[Entry]
    last: int
    waiting: int
    read: int = 0  # stream messages taken


@dataclasses.dataclass(frozen=True)
class Gathered:
    """A plain send waiting for its queue's next publish, and the future that answers it
    with its body keys."""

    messages: Sequence[tuple[StoredMessage, float]]
    waiter: asyncio.Future[list[int]]


def _packed(
    sends: Sequence[Sequence[tuple[StoredMessage, float]]],
) -> list[list[tuple[StoredMessage, float]]]:
    """Sends' messages in as few entries as carry them, a send's messages together where
    they fit in one entry (up to codec.SLOTS messages and ENTRY_BYTES of body; each
    message alone fits: fitness.py). Whole sends keep a queue's entries alike (ten
    messages each under batches of ten), which keeps the count of a deep backlog, its
    waiting entries times the messages per entry read, close (Backlog._counted)."""
    packs: list[list[tuple[StoredMessage, float]]] = [[]]
    size = 0
    for send in sends:
        lengths = [_length(message) for message in send]
        if packs[-1] and (
            size + sum(lengths) > ENTRY_BYTES or len(packs[-1]) + len(send) > codec.SLOTS
        ):
            packs.append([])
            size = 0
        for message, length in zip(send, lengths, strict=True):
            if packs[-1] and (size + length > ENTRY_BYTES or len(packs[-1]) >= codec.SLOTS):
                packs.append([])
                size = 0
            packs[-1].append(message)
            size += length
    return packs


def _length(message: tuple[StoredMessage, float]) -> int:
    return len(message[0].body) + sum(
        len(a.string_value or "") + len(a.binary_value or b"")
        for a in message[0].attributes.values()
    )


class Backlog:
    def __init__(self, res: edge.Resources, bodies: Bodies) -> None:
        self._res = res
        self._bodies = bodies
        # incarnation -> messages per entry in its last read (a hint for the next)
        self._per_entry: dict[str, float] = {}
        # incarnation -> bodies of its backlog no ledger names, left for a trim
        self._freed: dict[str, set[int]] = {}
        # incarnation -> plain sends waiting for the queue's next publish, and the task
        # that publishes them (see `publish_gathered`)
        self._gathered: dict[str, list[Gathered]] = {}
        self._gathering: dict[str, asyncio.Task[None]] = {}
        # the pause before a queue's next publish, keyed by incarnation (core/rounds.py)
        self._regather = Regather(REGATHER_MIN_SENDS)

    async def publish_gathered(
        self, incarnation: str, messages: Sequence[tuple[StoredMessage, float]]
    ) -> list[int]:
        """`publish`, for sends that need no order among themselves (plain sends of
        different callers): the sends that arrive while a queue's publish is on its way
        go together in its next one. Each publish is a round trip, its acknowledgement
        and a wake-up hint, about as much work for nats-server and this process for
        one message as for several: gathered, 16 concurrent SendMessage clients cost
        143 us of CPU a message instead of 202 (bench/README.md). A lone send waits one
        turn of the event loop; concurrent senders wait for each other (core/rounds.py)."""
        waiter: asyncio.Future[list[int]] = asyncio.get_running_loop().create_future()
        gathered = self._gathered.setdefault(incarnation, [])
        gathered.append(Gathered(messages, waiter))
        self._regather.arrived(incarnation, len(gathered))
        if incarnation not in self._gathering:
            self._gathering[incarnation] = asyncio.create_task(self._publish_all(incarnation))
        return await waiter

    async def _publish_all(self, incarnation: str) -> None:
        """Publish what the queue's senders gathered, until none wait. A failed publish
        fails every send it carried (none of them was acknowledged); a caller that gave
        up is not answered. Its own task: one caller's cancellation stops nobody else's
        send."""
        gathered: list[Gathered] = []
        carried, took = 0, 0.0  # the last publish's sends and round trip
        try:
            while True:
                waiting = len(self._gathered.get(incarnation, []))
                await self._regather.pause(incarnation, carried, waiting, took)
                if not (gathered := self._gathered.pop(incarnation, [])):
                    break
                began = time.monotonic()
                try:
                    keys = await self.publish_sends(incarnation, [g.messages for g in gathered])
                except Exception as error:
                    carried = 0
                    for one in gathered:
                        if not one.waiter.done():
                            one.waiter.set_exception(error)
                    continue
                carried, took = len(gathered), time.monotonic() - began
                start = 0
                for one in gathered:
                    end = start + len(one.messages)
                    if not one.waiter.done():
                        one.waiter.set_result(keys[start:end])
                    start = end
        finally:
            # No await since the last look: a send arriving now starts a new task.
            del self._gathering[incarnation]
            for one in [*gathered, *self._gathered.pop(incarnation, [])]:
                if not one.waiter.done():
                    one.waiter.set_exception(StoreUnavailable("the send was not published"))

    async def publish(
        self, incarnation: str, messages: Sequence[tuple[StoredMessage, float]]
    ) -> list[int]:
        """Append the messages, in order, as one entry (one publish) when they fit; their
        body keys, once JetStream has them all."""
        return await self.publish_sends(incarnation, [messages])

    async def publish_sends(
        self, incarnation: str, sends: Sequence[Sequence[tuple[StoredMessage, float]]]
    ) -> list[int]:
        """`publish` of several sends' messages, in order, each send's in one entry where
        it fits."""
        res = self._res
        subject = res.backlog_subject(incarnation)
        if not any(sends):
            return []

        async def one(pack: list[tuple[StoredMessage, float]]) -> list[int]:
            data = codec.encode_entry(pack)
            edge.fits(res.js, data)
            with edge.translated():
                ack = await res.js.publish(
                    subject,
                    data,
                    stream=res.body_stream,
                    # A publish the client library retries is stored once.
                    headers={"Nats-Msg-Id": pack[0][0].id},
                )
            keys = [codec.body_key(ack.seq, i) for i in range(len(pack))]
            for key, (stored, _) in zip(keys, pack, strict=True):
                self._bodies.keep(key, (stored.body, stored.attributes, stored.trace_header))
            return keys

        # One connection writes them in this order, so their sequences are send order.
        packs = await asyncio.gather(*(one(pack) for pack in _packed(sends)))
        # Long polls of other processes: a hint (they also look by themselves).
        with contextlib.suppress(nats.errors.Error):
            await res.nc.publish(res.wake_subject(incarnation), b"")
        return [key for keys in packs for key in keys]

    async def read(self, incarnation: str, after: int, limit: int) -> Read:
        """The entries after stream sequence `after`, until they hold `limit` messages
        or more. One request: a batched direct get (nats-server 2.11)."""
        res = self._res
        request = {
            "seq": after + 1,
            "next_by_subj": res.backlog_subject(incarnation),
            # Entries, not messages: as many as hold `limit` messages at the queue's
            # last seen messages per entry (one per SendMessage, ten per full batch).
            "batch": max(math.ceil(limit / self._per_entry.get(incarnation, 1.0)), 1),
            "max_bytes": READ_MAX_BYTES,
        }
        found = Read([], after, 0)
        done: asyncio.Future[Read] = asyncio.get_running_loop().create_future()

        # The answers go to a callback and the read waits once, rather than a wait with
        # a timer of its own for each entry (a tenth of a drain's CPU went to those).
        async def answered(msg: Msg) -> None:
            if done.done():
                return
            try:
                headers = msg.headers or {}
                status = headers.get("Status")
                if status == "404":
                    done.set_result(found)
                elif status is not None:  # 204: end of the batch
                    if status != "204":
                        raise StoreUnavailable(f"JetStream: direct get answered {status}")
                    found.waiting += int(headers.get("Nats-Num-Pending", 0))
                    done.set_result(self._counted(incarnation, found))
                elif len(found.entries) < limit:
                    self._take(found, msg.data, int(headers["Nats-Sequence"]))
                    found.read += 1
                else:
                    found.waiting += 1
            except Exception as error:  # the reader's to hear, not the subscription's
                done.set_exception(error)

        inbox = res.nc.new_inbox()
        with edge.translated():
            sub = await res.nc.subscribe(inbox, cb=answered)
            try:
                await res.nc.publish(
                    f"$JS.API.DIRECT.GET.{res.body_stream}", orjson.dumps(request), reply=inbox
                )
                return await asyncio.wait_for(done, edge.REQUEST_TIMEOUT_SECONDS)
            finally:
                await sub.unsubscribe()

    def forget(self, incarnation: str) -> None:
        """The queue of this incarnation was deleted: its hints go with it."""
        self._per_entry.pop(incarnation, None)
        self._freed.pop(incarnation, None)

    async def trim(
        self, incarnation: str, floor: int, freed: Iterable[int], *, settled: bool = False
    ) -> list[int]:
        """Remove the queue's entries below sequence `floor` (no ledger needs them) by one
        purge, once enough freed bodies lie below it, or any when `settled` (the ledger
        names no entry of the backlog any more). Freed bodies above it wait for the
        floor to pass them (a drain deletes out of order, and one purge then does the work
        of many deletes); those returned, when too many wait, are the caller's to delete.
        Best effort: a body left behind costs space until the stream's max age."""
        waiting = self._freed.setdefault(incarnation, set())
        waiting.update(freed)
        first = codec.body_key(floor)  # the first body key of sequence `floor`
        below = {key for key in waiting if key < first}
        # A purge is a request to JetStream: one per TRIM_BATCH freed bodies (a busy
        # drain freed a few below the floor at three writes in four), and one once the
        # ledger settled (a queue drained leaves no entry behind: quiet.py).
        if below and (len(below) >= TRIM_BATCH or settled):
            waiting -= below
            try:
                await self.drop(incarnation, below=floor)
            except StoreUnavailable as error:
                log.debug("hopper: backlog of %s not trimmed: %s", incarnation, error)
        if len(waiting) <= TRIM_WAITING:
            return []
        self._freed[incarnation] = set()
        return sorted(waiting)

    def _counted(self, incarnation: str, found: Read) -> Read:
        """`found` with its waiting entries counted as messages, at the messages per
        entry of what it read (or of the queue's last read): an estimate, as SQS's
        ApproximateNumberOfMessages is."""
        if found.read:
            self._per_entry[incarnation] = len(found.entries) / found.read
        found.waiting = round(found.waiting * self._per_entry.get(incarnation, 1.0))
        return found

    def _take(self, found: Read, data: bytes, seq: int) -> None:
        for index, (stored, body, visible_at) in enumerate(codec.decode_entry(data)):
            key = codec.body_key(seq, index)
            self._bodies.keep(key, body)
            found.entries.append(Entry(key, stored, visible_at))
        found.last = seq

    async def waiting(self, incarnation: str, after: int) -> int:
        """How many entries wait after sequence `after`."""
        found = await self.read(incarnation, after, 1)
        return len(found.entries) + found.waiting

    async def last(self, incarnation: str) -> int:
        """The sequence of the queue's last entry, or 0."""
        res = self._res
        try:
            with edge.translated():
                msg = await res.js.get_last_msg(res.body_stream, res.backlog_subject(incarnation))
        except StoreUnavailable as error:
            if isinstance(error.__cause__, nats.js.errors.NotFoundError):
                return 0
            raise
        return int(msg.seq or 0)

    async def drop(self, incarnation: str, *, below: int | None = None) -> None:
        """Remove the queue's entries (those before sequence `below`, when given)."""
        res = self._res
        with edge.translated():
            await res.js.purge_stream(
                res.body_stream, subject=res.backlog_subject(incarnation), seq=below
            )
