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

    def _wake(self) -> None:
        self._event.set()

    async def wait(self, timeout: float) -> bool:
        """True when woken (now or since the last wait), False after `timeout` seconds."""
        try:
            async with asyncio.timeout(max(timeout, 0.0)):
                await self._event.wait()
        except TimeoutError:
            return False
        self._event.clear()
        return True


class Wakeups:
    """The registry of watches by queue. Holds nothing for queues nobody waits on."""

    def __init__(self) -> None:
        self._watches: dict[QueueKey, set[Watch]] = {}

    def notify(self, key: QueueKey) -> None:
        """Wake every current waiter of `key`. Cheap when nobody waits."""
        for watch in self._watches.get(key, ()):
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
        watches = self._watches.setdefault(key, set())
        watches.add(watch)
        try:
            yield watch
        finally:
            watches.discard(watch)
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
