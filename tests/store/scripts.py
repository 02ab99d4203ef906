"""What the memory store's random-script tests share (test_memory_groups.py,
test_memory_shelf.py): three queues on a fresh store with a fake clock (one
dead-letters into the third, one into itself), and the script steps whose answers both
compare as they come."""

from __future__ import annotations

from typing import Any

from hopper.core.clock import FakeClock
from hopper.core.model import DeadLetterRule, QueueConfig, QueueKey, Receipt, VisibilityChange
from hopper.store.memory import MemoryQueueStore

ACCOUNT = "000000000000"
RETENTION = 60.0


class StoreScript:
    """One run of a script on a fresh store; `trace` collects every answer. `queues`:
    the one that dead-letters into the third, the one that dead-letters into itself,
    the dead-letter queue."""

    def __init__(self, queues: list[QueueKey], *, fifo: bool) -> None:
        self.queues = queues
        self.fifo = fifo
        self.clock = FakeClock()
        self.store = MemoryQueueStore(self.clock)
        self.held: list[tuple[QueueKey, Receipt]] = []
        self.trace: list[Any] = []

    async def setup(self) -> None:
        await self.store.start(lambda key, count: None)
        other, itself, dead = self.queues
        for key, rule in [
            (dead, None),
            (other, DeadLetterRule(dead, 2)),
            (itself, DeadLetterRule(itself, 2)),
        ]:
            config = QueueConfig(
                fifo=self.fifo, message_retention_period=RETENTION, dead_letter=rule
            )
            await self.store.create_queue(key, config, {}, now=None)

    async def change(self, index: int, timeout: int) -> Any:
        if not self.held:
            return None
        key, receipt = self.held[index % len(self.held)]
        change = VisibilityChange(receipt, timeout)
        return await self.store.change_visibility(key, [change], refuse_expired=False, now=None)

    async def delete(self, index: int) -> Any:
        if not self.held:
            return None
        key, receipt = self.held.pop(index % len(self.held))
        return await self.store.delete(key, [receipt], refuse_expired=False, now=None)

    async def advance(self, seconds: float) -> Any:
        self.clock.advance(seconds)

    async def move(self, named: bool, limit: int) -> Any:
        other, _, dead = self.queues
        destination = other if named else None
        return await self.store.move_messages(dead, destination, limit=limit, now=None)

    async def purge(self, queue: int) -> Any:
        return await self.store.purge(self.queues[queue], now=None)
