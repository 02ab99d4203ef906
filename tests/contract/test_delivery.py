"""Store contract: claiming messages — leases, fencing tokens, receive counts, time."""

from __future__ import annotations

import asyncio

from hopper.core.clock import FakeClock
from hopper.core.model import QueueStats
from hopper.core.store import QueueStore

from .factories import (
    attributes,
    change,
    make_dead_letter_pair,
    make_queue,
    message,
    receive,
    receive_one,
    send,
)


async def test_received_message_carries_what_was_sent(store: QueueStore, clock: FakeClock) -> None:
    queue = await make_queue(store, clock)
    sent = message("payload", attributes=attributes(), trace_header="Root=1-abc", group_id="t1")
    await send(store, clock, queue, sent)
    clock.advance(2)
    delivery = await receive_one(store, clock, queue, lease=30)
    assert delivery.message.id == sent.id
    assert delivery.message.body == "payload"
    assert delivery.message.attributes == attributes()
    assert delivery.message.trace_header == "Root=1-abc"
    assert delivery.message.group_id == "t1"
    assert delivery.message.sent_at == clock.time() - 2
    assert delivery.message.dead_letter_source is None
    assert delivery.receive_count == 1
    assert delivery.first_received_at == clock.time()
    assert delivery.visible_at == clock.time() + 30


async def test_store_results_name_the_sent_ids_in_order(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    batch = [message(f"m{i}") for i in range(3)]
    results = await store.send(queue, batch, now=clock.now())
    assert [r.message_id for r in results] == [m.id for m in batch]
    assert all(r.sequence_number is None and not r.duplicate for r in results)


async def test_batch_send_enqueues_every_message(store: QueueStore, clock: FakeClock) -> None:
    queue = await make_queue(store, clock)
    await send(store, clock, queue, *[message(f"m{i}") for i in range(10)])
    assert sorted(d.message.body for d in await receive(store, clock, queue)) == sorted(
        f"m{i}" for i in range(10)
    )


async def test_claimed_message_is_hidden_until_its_lease_runs_out(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await send(store, clock, queue)
    first = await receive_one(store, clock, queue, lease=10)
    clock.advance(9.9)
    assert await receive(store, clock, queue) == []
    clock.advance(0.1)
    again = await receive_one(store, clock, queue)
    assert again.message.id == first.message.id


async def test_receive_count_counts_deliveries(store: QueueStore, clock: FakeClock) -> None:
    queue = await make_queue(store, clock)
    await send(store, clock, queue)
    counts = []
    for _ in range(3):
        counts.append((await receive_one(store, clock, queue, lease=1)).receive_count)
        clock.advance(1)
    assert counts == [1, 2, 3]


async def test_first_received_at_is_the_first_delivery_time(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await send(store, clock, queue)
    first = await receive_one(store, clock, queue, lease=1)
    clock.advance(5)
    second = await receive_one(store, clock, queue, lease=1)
    assert second.first_received_at == first.first_received_at == clock.time() - 5


async def test_fencing_token_strictly_increases_with_every_delivery_of_a_message(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await send(store, clock, queue)
    tokens = []
    for _ in range(4):
        tokens.append((await receive_one(store, clock, queue, lease=1)).token)
        clock.advance(1)
    assert tokens == sorted(set(tokens))


async def test_fencing_tokens_come_from_one_store_wide_sequence(
    store: QueueStore, clock: FakeClock
) -> None:
    one = await make_queue(store, clock, "one")
    two = await make_queue(store, clock, "two")
    await send(store, clock, one, message("a"), message("b"))
    await send(store, clock, two, message("c"))
    tokens = [d.token for d in await receive(store, clock, one)]
    tokens += [d.token for d in await receive(store, clock, two)]
    assert len(set(tokens)) == 3
    assert tokens == sorted(tokens)


async def test_change_visibility_keeps_token_and_receive_count(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await send(store, clock, queue)
    first = await receive_one(store, clock, queue, lease=30)
    await change(store, clock, queue, first.receipt, 0)
    again = await receive_one(store, clock, queue)
    assert again.receive_count == 2
    assert again.token > first.token
    # The new delivery's token also works with change_visibility, unchanged.
    await change(store, clock, queue, again.receipt, 0)
    third = await receive_one(store, clock, queue)
    assert third.token > again.token and third.receive_count == 3


async def test_change_visibility_moves_the_deadline_from_now(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await send(store, clock, queue)
    delivery = await receive_one(store, clock, queue, lease=30)
    clock.advance(10)
    await change(store, clock, queue, delivery.receipt, 100)
    assert await store.next_visible_at(queue, now=clock.now()) == clock.time() + 100
    clock.advance(99)
    assert await receive(store, clock, queue) == []
    clock.advance(1)
    assert len(await receive(store, clock, queue)) == 1


async def test_delayed_message_is_receivable_only_after_its_delay(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await send(store, clock, queue, message(delay=5))
    assert await store.next_visible_at(queue, now=clock.now()) == clock.time() + 5
    clock.advance(4.5)
    assert await receive(store, clock, queue) == []
    clock.advance(0.5)
    assert len(await receive(store, clock, queue)) == 1


async def test_next_visible_at_is_the_earliest_future_deadline_or_none(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    assert await store.next_visible_at(queue, now=clock.now()) is None
    await send(store, clock, queue, message("now"))
    assert await store.next_visible_at(queue, now=clock.now()) is None
    await send(store, clock, queue, message("later", delay=50))
    await receive_one(store, clock, queue, lease=20)
    assert await store.next_visible_at(queue, now=clock.now()) == clock.time() + 20


async def test_receive_takes_at_most_max_messages_oldest_first(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    for i in range(5):
        await send(store, clock, queue, message(f"m{i}"))
        clock.advance(1)
    assert [d.message.body for d in await receive(store, clock, queue, n=3)] == ["m0", "m1", "m2"]
    assert [d.message.body for d in await receive(store, clock, queue, n=3)] == ["m3", "m4"]


async def test_messages_past_retention_are_never_delivered(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock, message_retention_period=60.0)
    await send(store, clock, queue, message("old"))
    clock.advance(30)
    await send(store, clock, queue, message("young"))
    clock.advance(30)
    assert [d.message.body for d in await receive(store, clock, queue)] == ["young"]
    stats = await store.stats(queue, now=clock.now())
    assert (stats.visible, stats.in_flight, stats.delayed) == (0, 1, 0)


async def test_expired_in_flight_message_is_not_counted(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock, message_retention_period=60.0)
    await send(store, clock, queue)
    await receive_one(store, clock, queue, lease=100)
    clock.advance(60)
    assert await store.stats(queue, now=clock.now()) == QueueStats(0, 0, 0, None)


async def test_concurrent_receives_never_claim_one_message_twice(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await send(store, clock, queue, *[message(f"m{i}") for i in range(10)])
    await send(store, clock, queue, *[message(f"n{i}") for i in range(10)])
    batches = await asyncio.gather(*[receive(store, clock, queue, n=3) for _ in range(20)])
    ids = [d.message.id for batch in batches for d in batch]
    assert len(ids) == 20
    assert len(set(ids)) == 20


async def test_stats_count_visible_in_flight_and_delayed(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    sent_at = clock.time()
    await send(store, clock, queue, message("a"), message("b"), message("c"))
    await send(store, clock, queue, message("d", delay=60))
    clock.advance(1)
    await receive_one(store, clock, queue, lease=30)
    stats = await store.stats(queue, now=clock.now())
    assert stats == QueueStats(
        visible=2, in_flight=1, delayed=1, oldest_sent_at=sent_at, oldest_visible_sent_at=sent_at
    )


async def test_a_message_whose_lease_ran_out_counts_as_visible(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await send(store, clock, queue)
    await receive_one(store, clock, queue, lease=5)
    clock.advance(5)
    stats = await store.stats(queue, now=clock.now())
    assert (stats.visible, stats.in_flight, stats.delayed) == (1, 0, 0)


async def test_stats_of_an_empty_queue_have_no_oldest_message(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    assert await store.stats(queue, now=clock.now()) == QueueStats(0, 0, 0, None)


async def test_purge_deletes_every_message_and_records_the_time(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    assert await store.last_purged_at(queue) is None
    await send(store, clock, queue, message("a"), message("b"), message("c", delay=10))
    await receive_one(store, clock, queue)
    clock.advance(2)
    assert await store.purge(queue, now=clock.now()) == 3
    assert await store.last_purged_at(queue) == clock.time()
    assert await store.stats(queue, now=clock.now()) == QueueStats(0, 0, 0, None)
    clock.advance(100)
    assert await receive(store, clock, queue) == []


async def test_a_receive_fills_up_from_behind_expired_in_flight_and_delayed_messages(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock, message_retention_period=60)
    await send(store, clock, queue, *[message(f"old{i}") for i in range(3)])
    clock.advance(61)
    await send(store, clock, queue, *[message(f"taken{i}") for i in range(3)])
    await receive(store, clock, queue, 3)
    await send(store, clock, queue, *[message(f"later{i}", delay=30) for i in range(2)])
    await send(store, clock, queue, *[message(f"m{i}") for i in range(12)])
    first = {d.message.body for d in await receive(store, clock, queue)}
    second = {d.message.body for d in await receive(store, clock, queue)}
    assert len(first) == 10
    assert first | second == {f"m{i}" for i in range(12)}
    assert await receive(store, clock, queue) == []


async def test_a_receive_that_moves_messages_still_fills_up_once_each(
    store: QueueStore, clock: FakeClock
) -> None:
    source, target = await make_dead_letter_pair(store, clock, max_receive_count=1)
    await send(store, clock, source, *[message(f"poison{i}") for i in range(5)])
    await receive(store, clock, source, 5, lease=0)
    await send(store, clock, source, *[message(f"fresh{i}") for i in range(12)])
    # Zero leases leave every delivered message visible: none may be delivered twice.
    bodies = [d.message.body for d in await receive(store, clock, source, lease=0)]
    assert len(bodies) == 10
    assert set(bodies) <= {f"fresh{i}" for i in range(12)} and len(set(bodies)) == 10
    assert len(await receive(store, clock, target)) == 5
