"""Per-queue wake-ups for long polls.

A wake-up is a hint that a queue may have receivable messages: a waiter that wakes
looks again, and a waiter that misses a wake-up still looks at its own deadline, so
correctness never depends on a notification arriving.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager

from hopper.core.model import QueueKey


class Watch:
    """One waiter's subscription to a queue's wake-ups.

    A wake-up that arrives while the holder is busy (for example between two claims)
    is remembered until the next `wait`, so none is lost between looking and waiting.
    """

    def __init__(self) -> None:
        self._event = asyncio.Event()
        self._waiting = False

    def _wake(self) -> None:
        self._event.set()

    @property
    def idle(self) -> bool:
        """Waiting, and not yet woken: a wake-up given to it is sure to be acted on."""
        return self._waiting and not self._event.is_set()

    async def wait(self, timeout: float) -> bool:
        """True when woken (now or since the last wait), False after `timeout` seconds."""
        self._waiting = True
        try:
            async with asyncio.timeout(max(timeout, 0.0)):
                await self._event.wait()
        except TimeoutError:
            return False
        finally:
            self._waiting = False
        self._event.clear()
        return True


class Wakeups:
    """The registry of watches by queue. Holds nothing for queues nobody waits on."""

    def __init__(self) -> None:
        # Per queue, the watches in the order they came (a dict: ordered, unlike a set),
        # so that a wake-up for a few messages goes to the longest waiting.
        self._watches: dict[QueueKey, dict[Watch, None]] = {}

    def notify(self, key: QueueKey, count: int | None = None) -> None:
        """Wake the waiters of `key`: all of them, or, when `count` messages became
        receivable, that many idle ones. Cheap when nobody waits.

        Waking every waiter for one message is a herd: each looks, one finds it, and
        the looks cost a store round trip each (16 long polls turned 500 sends/s into
        8,000 claims/s). With fewer idle waiters than messages, the busy ones (between
        two looks) are flagged too, so none of the messages waits for a fallback poll."""
        watches = self._watches.get(key)
        if not watches:
            return
        if count is None:
            for watch in watches:
                watch._wake()
            return
        idle = [watch for watch in watches if watch.idle]
        for watch in idle[:count]:
            watch._wake()
        if len(idle) < count:
            for watch in watches:
                watch._wake()

    def notify_all(self) -> None:
        """Wake every waiter of every queue (a server that is shutting down)."""
        for watches in list(self._watches.values()):
            for watch in watches:
                watch._wake()

    @contextmanager
    def watch(self, key: QueueKey) -> Iterator[Watch]:
        """Subscribe to `key`'s wake-ups for the duration of the block."""
        watch = Watch()
        watches = self._watches.setdefault(key, {})
        watches[watch] = None
        try:
            yield watch
        finally:
            watches.pop(watch, None)
            if not watches and self._watches.get(key) is watches:
                del self._watches[key]

    async def wait(self, key: QueueKey, timeout: float) -> bool:
        """Wait for the next wake-up of `key`: True when notified, False on timeout."""
        with self.watch(key) as watch:
            return await watch.wait(timeout)

    def waiting(self, key: QueueKey) -> int:
        """How many waiters `key` has (for tests and operators)."""
        return len(self._watches.get(key, ()))

    def total_waiting(self) -> int:
        """How many waiters all queues have together (a metrics gauge)."""
        return sum(len(watches) for watches in self._watches.values())
