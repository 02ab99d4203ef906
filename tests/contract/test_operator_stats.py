"""The operator's signals over every store, beyond AWS's three counts: the age of the
oldest visible message (are consumers keeping up?), redeliveries (are they failing?)
and the dead-letter depth (is something systemic wrong?)."""

from __future__ import annotations

from hopper.core.clock import FakeClock
from hopper.core.model import DeadLetterRule
from hopper.core.service import QueueService
from hopper.core.store import QueueStore

from .factories import (
    change,
    delete,
    make_dead_letter_pair,
    make_queue,
    message,
    receive,
    receive_one,
    send,
)


async def test_an_empty_queue_has_no_oldest_message_and_no_redeliveries(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    stats = await store.stats(queue, now=clock.now())
    assert (stats.oldest_sent_at, stats.oldest_visible_sent_at) == (None, None)
    assert (stats.redelivered, stats.redeliveries) == (0, 0)


async def test_the_oldest_visible_message_ignores_in_flight_and_delayed_ones(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    first_sent = clock.time()
    await send(store, clock, queue, message("oldest"))
    await receive_one(store, clock, queue, lease=100)  # in flight
    clock.advance(5)
    await send(store, clock, queue, message("delayed", delay=100.0))
    clock.advance(5)
    visible_sent = clock.time()
    await send(store, clock, queue, message("visible"))
    clock.advance(5)
    stats = await store.stats(queue, now=clock.now())
    assert stats.oldest_sent_at == first_sent
    assert stats.oldest_visible_sent_at == visible_sent


async def test_a_message_whose_lease_ran_out_is_visible_again_for_its_age(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    sent_at = clock.time()
    await send(store, clock, queue)
    await receive_one(store, clock, queue, lease=10)
    assert (await store.stats(queue, now=clock.now())).oldest_visible_sent_at is None
    clock.advance(10)
    assert (await store.stats(queue, now=clock.now())).oldest_visible_sent_at == sent_at


async def test_redeliveries_count_the_messages_received_again_and_their_extra_receives(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await send(store, clock, queue, message("once"), message("twice"), message("thrice"))
    # Each round receives what is visible; the message named is then held back.
    for held in ("once", "twice", "thrice"):
        deliveries = {d.message.body: d for d in await receive(store, clock, queue, lease=1)}
        await change(store, clock, queue, deliveries[held].receipt, 100)
        clock.advance(1)
    stats = await store.stats(queue, now=clock.now())
    # Receive counts 1, 2 and 3: two messages redelivered, 1 + 2 extra deliveries.
    assert (stats.redelivered, stats.redeliveries) == (2, 3)


async def test_deleted_messages_no_longer_count_as_redelivered(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await send(store, clock, queue)
    await receive_one(store, clock, queue, lease=1)
    clock.advance(1)
    again = await receive_one(store, clock, queue, lease=1)
    assert (await store.stats(queue, now=clock.now())).redeliveries == 1
    await delete(store, clock, queue, again.receipt)
    stats = await store.stats(queue, now=clock.now())
    assert (stats.redelivered, stats.redeliveries) == (0, 0)


async def test_dead_letter_depth_counts_every_message_of_the_target(
    service: QueueService, store: QueueStore, clock: FakeClock
) -> None:
    source, dlq = await make_dead_letter_pair(store, clock, max_receive_count=1)
    await send(store, clock, source)
    await receive(store, clock, source, lease=1)
    clock.advance(1)
    assert await receive(store, clock, source) == []  # dead-lettered
    await send(store, clock, dlq, message("delayed", delay=60.0))
    await send(store, clock, dlq, message("in flight"))
    await send(store, clock, dlq, message("visible"))
    assert len(await receive(store, clock, dlq, n=1, lease=100)) == 1
    assert await service.dead_letter_depth(source) == 4
    assert await service.dead_letter_depth(dlq) is None  # no dead-letter rule of its own


async def test_dead_letter_depth_of_a_queue_whose_target_is_gone_is_none(
    service: QueueService, store: QueueStore, clock: FakeClock
) -> None:
    dlq = await make_queue(store, clock, "dlq")
    source = await make_queue(store, clock, "source", dead_letter=DeadLetterRule(dlq, 3))
    assert await service.dead_letter_depth(source) == 0
    await store.delete_queue(dlq, now=clock.now())
    assert await service.dead_letter_depth(source) is None
