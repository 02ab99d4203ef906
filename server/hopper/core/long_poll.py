"""The long-poll engine: claims, waiting, wake-ups, deadlines.

`QueueService` checks a call's rules and hands the receives to this engine: a claim
(with AWS's in-flight limit), and a long poll that sleeps until a wake-up, the queue's
next visibility deadline, the fallback interval or its own deadline. Sends come to the
waiters through core/sends.py, which hands them what qualifies and wakes the others.
Notifications are hints: a waiter that misses one still looks at its deadline, so
correctness never depends on a wake-up arriving.

A long poll outlives a store outage of less than its own time: a claim that fails with
StoreUnavailable (the database restarting, its connections cut) is retried, with a
growing pause, until the poll's deadline; only a claim that still fails then answers
the error. Clients see a poll that waited, as SQS's do, not a 503 a second after a
database restart. A poll that starts during an outage waits it out the same way, from
its first read of the queue's record (`outlast`) to its first claim.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import random
from collections.abc import Awaitable, Callable
from typing import TypeVar

from hopper.core import limits
from hopper.core.bounds import InFlightGauge
from hopper.core.clock import Clock
from hopper.core.deadlines import NextDeadlines
from hopper.core.errors import QueueError, StoreUnavailable
from hopper.core.events import Events
from hopper.core.model import Delivery, QueueConfig, QueueKey
from hopper.core.store import QueueStore
from hopper.core.wakeups import Wakeups, Watch

# A long poll never sleeps less than this between looks, so a store clock that runs a
# little behind ours cannot turn the loop into a busy wait.
_MIN_PAUSE = 0.005
# After a failed claim a long poll waits this long before trying again, doubled after
# each failure up to the fallback interval.
_RETRY_PAUSE = 0.1
# A fallback pause is the interval less up to this part of it, at random.
_FALLBACK_SPREAD = 0.25
# The fallback looks a queue's waiting polls make in one interval, about (see _fallback).
FALLBACK_LOOKS = 32

log = logging.getLogger("hopper.long_poll")

# Makes deliveries nobody will answer with visible again (the service's visibility
# change, floor and all).
Release = Callable[[QueueKey, list[Delivery]], Awaitable[object]]
Gone = Callable[[], Awaitable[object]]
T = TypeVar("T")
# How long a shutdown waits for the releases still running.
_CLOSE_SECONDS = 5.0


class LongPolls:
    def __init__(
        self,
        store: QueueStore,
        clock: Clock,
        wakeups: Wakeups,
        in_flight: InFlightGauge,
        events: Events,
        *,
        poll_fallback_seconds: float,
        release: Release,
    ) -> None:
        """`poll_fallback_seconds`: the longest a waiter sleeps without looking, while
        a queue has at most FALLBACK_LOOKS of them (see _fallback).
        `release` makes deliveries visible again that nobody will answer with."""
        self.store = store
        self.clock = clock
        self.wakeups = wakeups
        self.in_flight = in_flight
        self.events = events
        self.poll_fallback_seconds = poll_fallback_seconds
        self._release = release
        self._deadlines = NextDeadlines()
        # Per queue, the store's answer being awaited for it (see _next_deadline).
        self._lookups: dict[QueueKey, asyncio.Future[float | None]] = {}
        self._releases: set[asyncio.Task[None]] = set()
        # Set by drain(): long polls answer at once instead of waiting.
        self.draining = False

    def drain(self) -> None:
        """Every long poll, waiting or yet to come, answers with what it has."""
        self.draining = True
        self.wakeups.notify_all()

    async def close(self) -> None:
        """Wait for the releases still running, for a while: a release the store does
        not answer in time ends with its lease instead (the message comes back then;
        nothing is lost), so a store that stopped answering cannot hold the exit."""
        if self._releases:
            await asyncio.wait(list(self._releases), timeout=_CLOSE_SECONDS)

    async def outlast(self, key: QueueKey, wait: float, call: Callable[[], Awaitable[T]]
                      ) -> tuple[T, float]:
        """`call` (a long poll's read before its first claim), tried again while the
        store is unavailable, with a growing pause, until `wait` seconds have passed;
        then its StoreUnavailable is the poll's answer. Returns its result and what is
        left of `wait`."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        failures = 0
        while True:
            try:
                return await call(), deadline - loop.time()
            except StoreUnavailable as error:
                remaining = deadline - loop.time()
                if remaining <= 0 or self.draining:
                    raise
                failures += 1
                if failures == 1:
                    log.warning("hopper: a long poll on %s retries reading its queue: %s",
                                key.name, error.reason)
            await asyncio.sleep(min(remaining, self._retry_pause(failures)))

    def _retry_pause(self, failures: int) -> float:
        """The pause after `failures` failed looks in a row: doubled each time, up to
        the fallback interval."""
        return min(self.poll_fallback_seconds, _RETRY_PAUSE * (1 << min(failures - 1, 8)))

    # --- claiming ---------------------------------------------------------------------

    async def claim(
        self,
        key: QueueKey,
        config: QueueConfig,
        max_messages: int,
        lease: float,
        attempt_id: str | None = None,
    ) -> list[Delivery]:
        """Claim up to max_messages, fewer when the in-flight limit leaves less room
        (none at all at the limit)."""
        room = await self.in_flight_room(key)
        if room == 0:
            return []
        deliveries = await self.store.receive(
            key, max_messages=min(max_messages, room), visibility_timeout=lease,
            now=self.clock.now(), attempt_id=attempt_id,
        )
        self.delivered(key, deliveries)
        if config.dead_letter is not None:
            # The claim may have moved messages there: a hint for its waiters.
            self.wakeups.notify(config.dead_letter.target)
        return deliveries

    async def in_flight_room(self, key: QueueKey) -> int:
        """How many more messages may go in flight: AWS's limit applies to standard
        queues only (a FIFO queue at its own limit answers no error, just nothing)."""
        if key.is_fifo:
            return limits.MAX_RECEIVE_MESSAGES

        async def measure() -> int:
            return await self.store.count_in_flight(key, now=self.clock.now())

        return await self.in_flight.room(key, measure)

    def delivered(self, key: QueueKey, deliveries: list[Delivery]) -> None:
        """Book deliveries made by a claim or a hand-off (core/sends.py)."""
        self.in_flight.claimed(key, len(deliveries))
        self.events.received(key, deliveries)
        if deliveries:
            self._deadlines.lower(key, min(d.visible_at for d in deliveries))

    # --- waiting ----------------------------------------------------------------------

    async def wait(
        self,
        key: QueueKey,
        config: QueueConfig,
        max_messages: int,
        lease: float,
        wait: float,
        attempt_id: str | None = None,
        gone: Gone | None = None,
    ) -> list[Delivery]:
        """Claim; if nothing came, sleep until a wake-up, the earliest visibility deadline,
        the fallback interval or the poll's own deadline, whichever is first; repeat.
        The watch is held across the loop so a send between two looks is not missed.
        A standard queue's long poll also takes messages sent in this process while it
        sleeps, handed to it as they arrive (core/handoff.py); a FIFO one always looks,
        for group order and receive attempts. `gone` returns once the caller went away:
        the poll then ends with nothing."""
        deadline = asyncio.get_running_loop().time() + wait
        # A queue with a retry policy draws each delivery's backoff in the store's claim:
        # nothing is handed to it at arrival.
        takes = None if key.is_fifo or config.retry_policy is not None else lease
        watch: Watch | None = None
        try:
            with self.wakeups.watch(key, capacity=max_messages, lease=takes) as watch:
                return await self._poll(
                    watch, key, config, max_messages, lease, deadline, attempt_id, gone
                )
        finally:
            left = [] if watch is None else watch.take()
            if left:  # handed over as this poll was cancelled: nobody will answer with them
                self.release_later(key, left)

    async def _poll(
        self,
        watch: Watch,
        key: QueueKey,
        config: QueueConfig,
        max_messages: int,
        lease: float,
        deadline: float,
        attempt_id: str | None,
        gone: Gone | None,
    ) -> list[Delivery]:
        loop = asyncio.get_running_loop()
        skip = await self._known_empty(key, attempt_id)
        failures = 0
        while True:
            # Deadlines are looked up as of the claim: a lease that runs out between the
            # claim and the look-up must still cut the pause short.
            looked_at = self.clock.now()
            if skip:
                skip, deliveries = False, []
            else:
                stamp = self.wakeups.looking()
                try:
                    deliveries = await self.claim(key, config, max_messages, lease, attempt_id)
                except StoreUnavailable as error:
                    if deadline - loop.time() <= 0 or self.draining:
                        raise
                    deliveries = []  # none claimed: the poll waits and looks again
                    failures += 1
                    if failures == 1:
                        log.warning("hopper: a long poll on %s retries its claim: %s",
                                    key.name, error.reason)
                else:
                    failures = 0
                    if not deliveries:
                        self.wakeups.found_nothing(key, stamp)
            remaining = deadline - loop.time()
            if deliveries or remaining <= 0 or self.draining:
                return deliveries
            pause, fallback = await self._pause(key, looked_at, remaining, failures)
            if gone is not None:
                watch.interrupt_when(gone)  # only a poll that sleeps pays for watching
            woken = await watch.wait(pause)
            if watch.interrupted:
                return []  # what was handed meanwhile is released by wait()
            handed = watch.take()
            if handed:
                return handed
            # Woken by the fallback interval alone, most polls of an idle queue find it
            # just looked at by another: 2,000 of them made 2,000 claims a second. (A
            # pause that a deadline ended always looks.)
            skip = fallback and not woken and await self._known_empty(key, attempt_id)

    async def _known_empty(self, key: QueueKey, attempt_id: str | None) -> bool:
        """Whether a look may be skipped: the queue was just found empty, with no
        wake-up since, and no deadline of it has passed (see core/wakeups.py). A retried
        attempt id always looks: its replay is no new message and announces none."""
        return (
            attempt_id is None
            and self.wakeups.known_empty(key)
            and not await self._deadline_passed(key)
        )

    async def _pause(
        self, key: QueueKey, looked_at: float | None, remaining: float, failures: int
    ) -> tuple[float, bool]:
        """How long a poll sleeps before it looks again: until the queue's next
        visibility deadline, the fallback interval or its own deadline; after a failed
        claim, a pause that grows with the failures. And whether it is the fallback
        interval (no deadline and no failure cut it short)."""
        fallback = self._fallback(key)
        pause = min(remaining, fallback)
        if failures:
            return min(pause, self._retry_pause(failures)), False
        try:
            upcoming = await self._next_deadline(key, looked_at)
        except StoreUnavailable:
            return min(pause, _RETRY_PAUSE), False  # the store just failed: look again soon
        if upcoming is not None:
            pause = min(pause, max(upcoming - self.clock.time(), _MIN_PAUSE))
        return pause, pause == fallback

    def _fallback(self, key: QueueKey) -> float:
        """How long a poll of `key` sleeps at most without a wake-up or a deadline.

        The fallback finds what no wake-up announced (another process's lost notice); a
        queue needs about FALLBACK_LOOKS looks for that per interval, not one per poll,
        and a poll woken just after another looked skips its look (known_empty) but
        still costs a wake-up: 2,000 idle polls woke 2,000 times a second, 14 % of a core.
        So with more polls than that, each sleeps proportionally longer, and the queue
        is still looked at about FALLBACK_LOOKS times an interval. The pause ends
        somewhere in the last quarter of its length, so that polls that began together
        (a burst of consumers) drift apart instead of all waking at the same instant."""
        polls = self.wakeups.waiting(key)
        longest = self.poll_fallback_seconds * max(1.0, polls / FALLBACK_LOOKS)
        return longest * (1 - _FALLBACK_SPREAD * random.random())

    async def _deadline_passed(self, key: QueueKey) -> bool:
        try:
            upcoming = await self._next_deadline(key, self.clock.now())
        except StoreUnavailable:
            return True  # not known: look (and let the claim meet the failure)
        return upcoming is not None and upcoming <= self.clock.time()

    async def _next_deadline(self, key: QueueKey, looked_at: float | None) -> float | None:
        """The queue's next visibility deadline, shared by this process's long polls
        for a moment (core/deadlines.py). Polls that ask while the store is being asked
        share that answer: 1,000 polls waking together asked it 1,000 times at once. (It
        may be as of a look a little earlier than theirs: a deadline between the two is
        one more reason to look soon, never a missed one.)"""
        known, deadline = self._deadlines.get(key, self.clock.time())
        if known:
            return deadline
        lookup = self._lookups.get(key)
        if lookup is None:
            lookup = asyncio.ensure_future(self._look_up(key, looked_at))
            self._lookups[key] = lookup
            lookup.add_done_callback(functools.partial(self._looked_up, key))
        # Shielded: a poll that is cancelled must not cancel the others' answer.
        return await asyncio.shield(lookup)

    def _looked_up(self, key: QueueKey, lookup: asyncio.Future[float | None]) -> None:
        self._lookups.pop(key, None)
        if not lookup.cancelled():
            lookup.exception()  # retrieved: its waiters may all have been cancelled

    async def _look_up(self, key: QueueKey, looked_at: float | None) -> float | None:
        deadline = await self.store.next_visible_at(key, now=looked_at)
        self._deadlines.put(key, deadline)
        return deadline

    # --- leases -----------------------------------------------------------------------

    def expect(self, key: QueueKey, at: float) -> None:
        """A message of `key` becomes receivable at `at` (a delayed send): its waiters
        sleep until then at most."""
        self._deadlines.lower(key, at)

    def leases_changed(self, key: QueueKey) -> None:
        """Visibility deadlines of `key` moved: a waiter may now find a message sooner
        than it planned."""
        self._deadlines.forget(key)
        self.wakeups.notify(key)

    def forget(self, key: QueueKey) -> None:
        """`key` was deleted: nothing kept for it stays (its waiters, woken, end with
        QueueNotFound at their next look)."""
        self._deadlines.forget(key)
        self.wakeups.forget(key)

    def release_later(self, key: QueueKey, deliveries: list[Delivery]) -> None:
        """Make deliveries nobody will answer with visible again, in the background."""
        task = asyncio.create_task(self._release_quietly(key, deliveries), name="hopper-release")
        self._releases.add(task)
        task.add_done_callback(self._releases.discard)

    async def _release_quietly(self, key: QueueKey, deliveries: list[Delivery]) -> None:
        with contextlib.suppress(QueueError):  # gone or deleted meanwhile: nothing to do
            await self._release(key, deliveries)
