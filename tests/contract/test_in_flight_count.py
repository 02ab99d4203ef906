"""store.count_in_flight over every store: the in-flight count of `stats` alone, which
the core reads for AWS's in-flight limit (core/bounds.InFlightGauge)."""

from __future__ import annotations

import pytest

from hopper.core.clock import FakeClock
from hopper.core.errors import QueueNotFound
from hopper.core.store import QueueStore

from .factories import key, make_queue, message, receive, receive_one, send


async def test_only_received_messages_whose_lease_runs_are_counted_in_flight(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await send(store, clock, queue, message("a"), message("b"), message("c"))
    await receive(store, clock, queue, n=2, lease=10)  # two in flight
    await send(store, clock, queue, message("delayed", delay=100.0))
    assert await store.count_in_flight(queue, now=clock.now()) == 2
    assert (await store.stats(queue, now=clock.now())).in_flight == 2


async def test_a_message_whose_lease_ran_out_is_no_longer_in_flight(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await send(store, clock, queue)
    await receive_one(store, clock, queue, lease=10)
    clock.advance(10)
    assert await store.count_in_flight(queue, now=clock.now()) == 0


async def test_an_expired_message_in_flight_is_not_counted(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock, message_retention_period=60)
    await send(store, clock, queue)
    await receive_one(store, clock, queue, lease=600)
    clock.advance(60)
    assert await store.count_in_flight(queue, now=clock.now()) == 0


async def test_counting_a_queue_that_does_not_exist_raises_queue_not_found(
    store: QueueStore, clock: FakeClock
) -> None:
    with pytest.raises(QueueNotFound):
        await store.count_in_flight(key("missing"), now=clock.now())
