"""What long polls of a queue share about its next visibility deadline.

A long poll that found nothing sleeps until the earliest lease or delay of the queue
runs out. Asking the store after every empty look cost a statement per look (on
PostgreSQL one that reads the queue's in-flight and delayed rows): with 16 long polls
on a busy queue, once per message. The answer is shared by this process's long polls
for `ttl` seconds of real time; deadlines this process sets meanwhile (a claim's
leases, a delayed send) are folded in, and a visibility change forgets it. Another
process's new deadlines are seen within `ttl`, and a waiter never sleeps longer than
its fallback interval anyway.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from hopper.core.model import QueueKey


class NextDeadlines:
    def __init__(
        self, ttl: float = 0.25, limit: int = 10_000, now: Callable[[], float] = time.monotonic
    ) -> None:
        self._ttl = ttl
        self._limit = limit
        self._now = now
        # per queue: (when it was read, the earliest deadline or None)
        self._known: dict[QueueKey, tuple[float, float | None]] = {}

    def get(self, key: QueueKey, clock_time: float) -> tuple[bool, float | None]:
        """(known, deadline): known is False when the store must be asked, that is
        when nothing is remembered, the answer is older than `ttl`, or its deadline is
        no longer ahead of `clock_time`."""
        entry = self._known.get(key)
        if entry is None:
            return False, None
        read_at, deadline = entry
        if self._now() - read_at > self._ttl or (deadline is not None and deadline <= clock_time):
            del self._known[key]
            return False, None
        return True, deadline

    def put(self, key: QueueKey, deadline: float | None) -> None:
        if len(self._known) >= self._limit:
            self._known.clear()  # bounded; the queues in use are read again
        self._known[key] = (self._now(), deadline)

    def lower(self, key: QueueKey, deadline: float) -> None:
        """A deadline this process just set: the next one is no later than it."""
        entry = self._known.get(key)
        if entry is not None and (entry[1] is None or deadline < entry[1]):
            self._known[key] = (entry[0], deadline)

    def forget(self, key: QueueKey) -> None:
        self._known.pop(key, None)
