"""VACUUM of the messages table, run by the store itself as deletes pile up.

A receive scans the queue-order index from the head of the queue, and every deleted
message leaves a dead entry there until VACUUM removes it: a long drain makes every
receive read through more and more of them (measured by tests/postgres/test_drain.py:
12 blocks per received message at the start, 80 after 90,000 deletes). Autovacuum
cannot be relied on for it: it looks at a table once a minute at best
(autovacuum_naptime), which at thousands of deletes a second is hundreds of thousands
of dead entries, and it may be switched off. So each store counts the messages it
deleted and starts a VACUUM in the background when they reach `max(minimum, fraction
* table rows)`. Proportional, because a VACUUM reads every index of the table whole:
the work per deleted message stays the same whatever the backlog. With several
processes, a VACUUM already running elsewhere is skipped (SKIP_LOCKED), not waited for.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)

MINIMUM = 5_000
FRACTION = 0.02


class Vacuum:
    """Counts deletions and runs `run()` (VACUUM, then the table's row estimate) in the
    background when enough have happened; one run at a time."""

    def __init__(
        self,
        run: Callable[[], Awaitable[float]],
        *,
        minimum: int = MINIMUM,
        fraction: float = FRACTION,
    ) -> None:
        self._run = run
        self._minimum = minimum
        self._fraction = fraction
        self._threshold = minimum  # the table's size is learnt from the first run
        self._deleted = 0
        self._task: asyncio.Task[None] | None = None
        self.runs = 0

    def deleted(self, count: int) -> None:
        """Note `count` deleted messages; may start a VACUUM (never waits for one)."""
        self._deleted += count
        if self._deleted < self._threshold or (self._task is not None and not self._task.done()):
            return
        self._deleted = 0
        self._task = asyncio.create_task(self._vacuum(), name="hopper-vacuum")

    async def _vacuum(self) -> None:
        try:
            rows = await self._run()
        except Exception as error:  # housekeeping: the next threshold tries again
            log.warning("VACUUM of the messages table failed: %s", error)
            return
        self.runs += 1
        self._threshold = max(self._minimum, int(self._fraction * rows))

    async def close(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
