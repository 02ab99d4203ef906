"""Queue records read in the last second, for the message paths.

Every SendMessage and ReceiveMessage needs its queue's settings; reading them from the
store each time was a third of a send's round trips on PostgreSQL. The message paths
use a record read at most `ttl` seconds ago; this process's own changes to a queue
forget its record at once. Another process's change is seen within `ttl`: AWS itself
says attribute changes take up to 60 seconds to propagate. Whether the queue still
exists is checked by the store's own statements, not by this cache.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from hopper.core.model import QueueKey, QueueRecord


class RecentQueues:
    def __init__(
        self, ttl: float = 1.0, limit: int = 10_000, now: Callable[[], float] = time.monotonic
    ) -> None:
        self._ttl = ttl
        self._limit = limit
        self._now = now
        self._records: dict[QueueKey, tuple[float, QueueRecord]] = {}

    def get(self, key: QueueKey) -> QueueRecord | None:
        entry = self._records.get(key)
        if entry is None:
            return None
        read_at, record = entry
        if self._now() - read_at > self._ttl:
            del self._records[key]
            return None
        return record

    def put(self, record: QueueRecord) -> None:
        if len(self._records) >= self._limit:
            self._records.clear()  # bounded; the next reads refill what is in use
        self._records[record.key] = (self._now(), record)

    def forget(self, key: QueueKey) -> None:
        self._records.pop(key, None)
