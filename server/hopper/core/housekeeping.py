"""The background round every server process runs: the retention sweep, and taking
over move tasks whose runner stopped (another process died, or this one restarted)."""

from __future__ import annotations

import asyncio
import contextlib

from hopper.core.clock import Clock
from hopper.core.errors import QueueError
from hopper.core.move_tasks import MoveTasks
from hopper.core.store import QueueStore

# The retention sweeper: messages per store call, and calls per round at most (a round
# never holds the store for long; what is left waits for the next round).
SWEEP_BATCH = 500
SWEEP_ROUNDS = 20


class Housekeeping:
    def __init__(
        self, store: QueueStore, clock: Clock, move_tasks: MoveTasks, *, period: float
    ) -> None:
        """`period`: seconds between two rounds."""
        self.store = store
        self.clock = clock
        self.move_tasks = move_tasks
        self.period = period
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._rounds(), name="hopper-housekeeping")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def round(self) -> int:
        """Sweep expired messages (bounded batches) and take over move tasks whose
        runner stopped. Returns how many messages were swept."""
        swept = 0
        for _ in range(SWEEP_ROUNDS):
            batch = await self.store.sweep_expired(limit=SWEEP_BATCH, now=self.clock.now())
            swept += batch
            if batch < SWEEP_BATCH:
                break
        await self.move_tasks.resume_orphans()
        return swept

    async def _rounds(self) -> None:
        while True:
            # The store may be down for now: the next round tries again.
            with contextlib.suppress(QueueError):
                await self.round()
            await asyncio.sleep(self.period)
