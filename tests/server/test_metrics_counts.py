"""How often the operators' views count a queue (observability/overview.Counts): as
often as the count's own cost allows, so a big queue is not read whole on every
scrape while a small one stays exact."""

from __future__ import annotations

from typing import Any

from hopper.core.clock import FakeClock
from hopper.core.events import Broadcast
from hopper.core.model import MessageDraft, QueueKey
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


class CountingStore:
    """The memory store, counting its stats calls. A wrapper, not a subclass: the memory
    store may be compiled (setup.py), and an interpreted class cannot inherit from a
    compiled one."""

    def __init__(self, clock: FakeClock) -> None:
        self._store = MemoryQueueStore(clock)
        self.counted = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    async def stats(self, key, *, now):  # type: ignore[no-untyped-def]
        self.counted += 1
        return await self._store.stats(key, now=now)


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


async def _many_queues_counted_once(
    per_count: float = 0.001,
) -> tuple[CountingStore, QueueService, Counts, Ticks]:
    """100 empty queues, each counted once at `per_count` seconds a count (0.1 s for
    all of them), with a Counts that hears of the queues' use."""
    clock = FakeClock()
    store = CountingStore(clock)
    events = Broadcast()
    service = QueueService(store, clock=clock, events=events)
    for number in range(100):
        await service.create_queue(QueueKey(QUEUE.account, f"q{number}"), {}, {})
    ticks = Ticks()
    counts = Counts(service, monotonic=ticks)
    events.add(counts)
    ticks.per_call = per_count
    for number in range(100):
        await counts.stats(QueueKey(QUEUE.account, f"q{number}"))
    ticks.per_call = 0.0
    assert store.counted == 100
    return store, service, counts, ticks


FIRST = QueueKey(QUEUE.account, "q0")


async def test_with_many_queues_a_quiet_one_is_counted_again_once_counting_all_allows() -> None:
    store, _, counts, ticks = await _many_queues_counted_once()
    ticks.now += 0.2  # beyond 100 x its own 1 ms, within 100 x all of them (10 s)
    await counts.stats(FIRST)
    assert store.counted == 100
    ticks.now += 10.0
    await counts.stats(FIRST)
    assert store.counted == 101


async def test_with_many_queues_one_used_since_its_count_is_counted_by_its_own_cost() -> None:
    store, service, counts, ticks = await _many_queues_counted_once()
    await service.send(FIRST, MessageDraft(body="news"))
    ticks.now += 0.2
    await counts.stats(FIRST)
    assert store.counted == 101
    assert (await counts.stats(FIRST)).visible == 1


async def test_with_many_queues_one_holding_messages_in_flight_is_counted_by_its_own_cost() -> (
    None
):
    store, service, counts, ticks = await _many_queues_counted_once()
    await service.send(FIRST, MessageDraft(body="leased"))
    await service.receive(FIRST, visibility_timeout=30)
    ticks.now += 0.2
    assert (await counts.stats(FIRST)).in_flight == 1  # counted after the receive
    ticks.now += 0.2  # no use since; its lease may run out meanwhile
    await counts.stats(FIRST)
    assert store.counted == 102
