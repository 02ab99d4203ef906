"""How often the operators' views count a queue (observability/overview.Counts): as
often as the count's own cost allows, so a big queue is not read whole on every
scrape while a small one stays exact."""

from __future__ import annotations

from hopper.core.clock import FakeClock
from hopper.core.model import QueueKey
from hopper.core.service import QueueService
from hopper.observability.overview import Counts
from hopper.store.memory import MemoryQueueStore

QUEUE = QueueKey("000000000000", "counted")


class Ticks:
    """A monotonic clock the test moves; each call to it may also cost time."""

    def __init__(self) -> None:
        self.now = 100.0
        self.per_call = 0.0

    def __call__(self) -> float:
        self.now += self.per_call
        return self.now


class CountingStore(MemoryQueueStore):
    def __init__(self, clock: FakeClock) -> None:
        super().__init__(clock)
        self.counted = 0

    async def stats(self, key, *, now):  # type: ignore[no-untyped-def]
        self.counted += 1
        return await super().stats(key, now=now)


async def test_a_queue_is_counted_again_once_a_hundred_times_its_count_has_passed() -> None:
    clock = FakeClock()
    store = CountingStore(clock)
    service = QueueService(store, clock=clock)
    await service.create_queue(QUEUE, {}, {})
    ticks = Ticks()
    counts = Counts(service, monotonic=ticks)
    ticks.per_call = 0.5  # a count that takes 0.5 s
    await counts.stats(QUEUE)
    assert store.counted == 1
    ticks.per_call = 0.0
    ticks.now += 49.0  # 49 s after the count began: within 100 x 0.5 s
    await counts.stats(QUEUE)
    assert store.counted == 1
    ticks.now += 1.0  # 50 s
    await counts.stats(QUEUE)
    assert store.counted == 2


async def test_counts_of_a_cheap_queue_are_fresh_at_every_scrape_interval() -> None:
    clock = FakeClock()
    store = CountingStore(clock)
    service = QueueService(store, clock=clock)
    await service.create_queue(QUEUE, {}, {})
    ticks = Ticks()
    counts = Counts(service, monotonic=ticks)
    ticks.per_call = 0.001  # a 1 ms count
    for _ in range(3):
        await counts.stats(QUEUE)
        ticks.now += 0.2  # more than 100 x 1 ms later
    assert store.counted == 3
