"""Per-queue wake-ups for long polls, and what the last look at a queue found.

A wake-up is a hint that a queue may have receivable messages: a waiter that wakes
looks again, and a waiter that misses a wake-up still looks at its own deadline, so
correctness never depends on a notification arriving.

A long poll may also take messages as they arrive (core/handoff.py): a send in this
process offers its messages to idle watches that accept them (`offer`), enqueues them
already delivered to those watches, and hands each its deliveries (`hand`). Such a
send wakes nobody else and leaves a queue known to be empty known to be empty.

A look that found nothing is remembered for a moment (`EMPTY_TRUST_SECONDS`) until
the queue's next wake-up: a long poll that starts meanwhile waits straight away
instead of looking at a queue known to be empty. Consumers that poll again as soon
as they have deleted made that first look one store round trip per receive, half of
all claims at 500 messages/s. Messages a wake-up does not announce (a lease or delay
that runs out) are the long poll's deadline look-up's to find, and another process's
releases are seen within the moment.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager

from hopper.core.model import Delivery, NewMessage, QueueKey, SendResult


def news(sent: Sequence[NewMessage], results: Sequence[SendResult]) -> list[NewMessage]:
    """The messages of a send that are news to waiters, in this process or another:
    those enqueued (no duplicate, none refused at the depth ceiling) and not already
    handed to a long poll as they arrived (core/handoff.py). Those without a delay are
    receivable now; the others at their delay's end."""
    return [
        message
        for message, result in zip(sent, results, strict=True)
        if not (result.duplicate or result.refused or result.delivery is not None)
    ]


class Watch:
    """One waiter's subscription to a queue's wake-ups.

    A wake-up that arrives while the holder is busy (for example between two claims)
    is remembered until the next `wait`, so none is lost between looking and waiting.

    `capacity` is how many messages the holder's next look takes (a long poll's
    MaxNumberOfMessages): a waiter woken for one message and not yet looking will take
    up to that many, so wake-ups for more messages in the meantime are its too.
    """

    def __init__(self, capacity: int = 1, lease: float | None = None) -> None:
        self._event = asyncio.Event()
        # Woken since the last wait was answered (the event is also set by wait's timer).
        self._rung = False
        self._waiting = False
        self.capacity = capacity
        # Messages the wake-ups since this watch was woken told of (its next look's).
        self._promised = 0
        # The visibility timeout under which the holder takes messages handed to it as
        # they arrive; None: it takes none.
        self.lease = lease
        # Messages a send is enqueueing for this watch (0: no offer open), and the
        # deliveries handed to it and not yet taken.
        self.offered = 0
        self._handed: list[Delivery] = []
        self._gone = False
        # The holder's caller went away: its wait ends and it takes nothing more.
        self.interrupted = False
        self._departure: asyncio.Task[None] | None = None

    def _wake(self) -> None:
        self._rung = True
        self._event.set()

    @property
    def idle(self) -> bool:
        """Waiting, and not yet woken: a wake-up given to it is sure to be acted on."""
        return self._waiting and not self._rung and not self.offered

    def interrupt_when(self, gone: Callable[[], Awaitable[object]]) -> None:
        """End the holder's wait, now or in any later one, once `gone` returns (whoever
        it waits for went away). Watched from the first call until the watch is left."""
        if self._departure is None:
            self._departure = asyncio.create_task(self._interrupt_when(gone))

    async def _interrupt_when(self, gone: Callable[[], Awaitable[object]]) -> None:
        await gone()
        self.interrupted = True
        self._wake()

    def hand(self, deliveries: list[Delivery]) -> bool:
        """Close this watch's offer: give it `deliveries` (none: the send failed) and
        wake it. False when the holder has left the watch: the deliveries are nobody's,
        the sender's to release. (A holder leaving with deliveries not yet taken
        releases them itself: see `take`.)"""
        self.offered = 0
        if self._gone:
            return not deliveries
        self._handed.extend(deliveries)
        self._wake()
        return True

    def take(self) -> list[Delivery]:
        """The deliveries handed to this watch since the last take."""
        handed, self._handed = self._handed, []
        return handed

    @property
    def _room(self) -> int:
        """Woken and not yet looking: how many more told-of messages its look takes.
        None for a watch handed deliveries: its holder returns them without looking,
        so a message promised to it would wait for another waiter's fallback look."""
        if self._waiting and self._rung and not self._handed:
            return self.capacity - self._promised
        return 0

    async def wait(self, timeout: float) -> bool:
        """True when woken (now or since the last wait), False after `timeout` seconds."""
        self._waiting = True
        # A timer that sets the event, not asyncio.timeout: its end is a cancellation
        # thrown through the whole request's coroutines, and idle long polls end a
        # fallback pause each about once a second (a tenth of a core for 1,000 polls).
        timer = asyncio.get_running_loop().call_later(max(timeout, 0.0), self._event.set)
        try:
            await self._event.wait()
            while self.offered:
                # A send is enqueueing messages for this watch: they are its to take
                # (the send closes the offer whatever happens, in one statement's time).
                self._event.clear()
                await self._event.wait()
        finally:
            timer.cancel()
            # (cancelled: the promise stays, for Wakeups.watch to hand over)
            self._waiting = False
        woken, self._rung = self._rung, False
        self._event.clear()  # set by a wake-up or by the timer: either is taken now
        self._promised = 0  # the holder looks now
        return woken


EMPTY_TRUST_SECONDS = 0.25


class Wakeups:
    """The registry of watches by queue. Holds nothing for queues nobody waits on."""

    def __init__(
        self, limit: int = 10_000, now: Callable[[], float] = time.monotonic
    ) -> None:
        # Per queue, the watches in the order they came (a dict: ordered, unlike a set),
        # so that a wake-up for a few messages goes to the longest waiting.
        self._watches: dict[QueueKey, dict[Watch, None]] = {}
        # Stamps order looks and wake-ups: per queue, the stamp of its last wake-up,
        # and of the last look that found nothing (with when it ended).
        self._stamps = itertools.count(1)
        self._woken_at: dict[QueueKey, int] = {}
        self._empty: dict[QueueKey, tuple[int, float]] = {}
        # Looks begun before this stamp are not remembered (wake-ups were forgotten).
        self._forgotten_before = 0
        self._limit = limit
        self._now = now

    def looking(self) -> int:
        """A stamp to take before looking at a queue, for `found_nothing`."""
        return next(self._stamps)

    def found_nothing(self, key: QueueKey, stamp: int) -> None:
        """A look begun at `stamp` found nothing receivable in `key`: remembered unless
        a wake-up of `key` came since (the look may have missed what it announced)."""
        if self._woken_at.get(key, self._forgotten_before) < stamp:
            if len(self._empty) >= self._limit:
                self._empty.clear()
            self._empty[key] = (stamp, self._now())

    def known_empty(self, key: QueueKey) -> bool:
        """A look found `key` empty less than EMPTY_TRUST_SECONDS ago, and no wake-up
        of it came since."""
        mark = self._empty.get(key)
        return mark is not None and self._now() - mark[1] <= EMPTY_TRUST_SECONDS

    def forget(self, key: QueueKey) -> None:
        """Keep nothing for `key` (deleted). Without its last wake-up, a look begun
        before it could be taken for a look after it: looks begun so far are not
        remembered as empty, as when every wake-up is forgotten."""
        self._woken_at.pop(key, None)
        self._empty.pop(key, None)
        self._forgotten_before = next(self._stamps)

    def notify(self, key: QueueKey, count: int | None = None) -> None:
        """Wake the waiters of `key`: all of them, or, when `count` messages became
        receivable, that many idle ones. Cheap when nobody waits.

        Waking every waiter for one message is a herd: each looks, one finds it, and
        the looks cost a store round trip each (16 long polls turned 500 sends/s into
        8,000 claims/s). So the messages go first to waiters already woken that have
        not looked yet and have room (their look takes them too), then to idle waiters,
        each taking as many as it will receive. With more messages than that, the busy
        ones (between two looks) are flagged too, so none waits for a fallback poll."""
        if len(self._woken_at) >= self._limit:
            self._woken_at.clear()
            self._empty.clear()
            self._forgotten_before = next(self._stamps)
        self._woken_at[key] = next(self._stamps)
        self._empty.pop(key, None)
        watches = self._watches.get(key)
        if not watches:
            return
        if count is None:
            for watch in watches:
                watch._wake()
            return
        remaining = count
        for watch in watches:
            taken = min(watch._room, remaining)
            watch._promised += taken
            remaining -= taken
        for watch in watches:
            if remaining <= 0:
                return
            if watch.idle:
                watch._wake()
                watch._promised = min(watch.capacity, remaining)
                remaining -= watch._promised
        if remaining > 0:
            for watch in watches:
                watch._wake()

    def takers(self, key: QueueKey) -> bool:
        """Whether `key` has an idle watch that takes handed messages (cheap)."""
        return any(w.lease is not None and w.idle for w in self._watches.get(key, ()))

    def offer(self, key: QueueKey, count: int) -> list[tuple[Watch, int]]:
        """Open offers for up to `count` arriving messages of `key` to idle watches that
        take handed messages, longest waiting first: (watch, how many) each. Every
        offer must be closed with `Watch.hand`."""
        offers: list[tuple[Watch, int]] = []
        for watch in self._watches.get(key, ()):
            if count <= 0:
                break
            if watch.lease is not None and watch.idle:
                watch.offered = min(watch.capacity, count)
                count -= watch.offered
                offers.append((watch, watch.offered))
        return offers

    def notify_all(self) -> None:
        """Wake every waiter of every queue (a server that is shutting down)."""
        self._empty.clear()
        for watches in list(self._watches.values()):
            for watch in watches:
                watch._wake()

    @contextmanager
    def watch(
        self, key: QueueKey, capacity: int = 1, lease: float | None = None
    ) -> Iterator[Watch]:
        """Subscribe to `key`'s wake-ups for the duration of the block; `capacity`: how
        many messages each of the holder's looks takes; `lease`: the visibility timeout
        of messages handed to it as they arrive (None: it takes none)."""
        watch = Watch(capacity, lease)
        watches = self._watches.setdefault(key, {})
        watches[watch] = None
        try:
            yield watch
        finally:
            watches.pop(watch, None)
            if not watches and self._watches.get(key) is watches:
                del self._watches[key]
            watch._gone = True
            if watch._departure is not None:
                watch._departure.cancel()
            if watch._promised:
                # Woken and gone without looking (a client that hung up): its messages
                # go to the others.
                self.notify(key, watch._promised)

    async def wait(self, key: QueueKey, timeout: float) -> bool:
        """Wait for the next wake-up of `key`: True when notified, False on timeout."""
        with self.watch(key) as watch:
            return await watch.wait(timeout)

    def waiting(self, key: QueueKey) -> int:
        """How many waiters `key` has (for tests and operators)."""
        return len(self._watches.get(key, ()))

    def watched(self) -> list[QueueKey]:
        """The queues that have waiters (nothing is kept for the others)."""
        return list(self._watches)

    def total_waiting(self) -> int:
        """How many waiters all queues have together (a metrics gauge)."""
        return sum(len(watches) for watches in self._watches.values())
