"""Store contract: FIFO queues — order per group, group locks, dedup, sequence numbers."""

from __future__ import annotations

from hopper.core.clock import FakeClock
from hopper.core.store import QueueStore

from .factories import change, delete, fifo_message, make_queue, receive, receive_one, send


async def test_fifo_delivers_a_group_in_send_order(store: QueueStore, clock: FakeClock) -> None:
    queue = await make_queue(store, clock, "q.fifo")
    await send(store, clock, queue, *[fifo_message("g", body=f"m{i}") for i in range(5)])
    assert [d.message.body for d in await receive(store, clock, queue)] == [
        f"m{i}" for i in range(5)
    ]


async def test_fifo_group_is_locked_while_a_message_is_in_flight(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock, "q.fifo")
    await send(store, clock, queue, fifo_message("g", body="first"), fifo_message("g", body="2nd"))
    first = await receive_one(store, clock, queue, lease=10)
    assert first.message.body == "first"
    assert await receive(store, clock, queue) == []
    await delete(store, clock, queue, first.receipt)
    assert [d.message.body for d in await receive(store, clock, queue)] == ["2nd"]


async def test_fifo_group_lock_ends_when_the_lease_runs_out_and_order_is_kept(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock, "q.fifo")
    await send(store, clock, queue, fifo_message("g", body="first"), fifo_message("g", body="2nd"))
    await receive_one(store, clock, queue, lease=10)
    clock.advance(10)
    assert [d.message.body for d in await receive(store, clock, queue, n=1)] == ["first"]


async def test_fifo_group_lock_follows_change_visibility(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock, "q.fifo")
    await send(store, clock, queue, fifo_message("g", body="first"), fifo_message("g", body="2nd"))
    first = await receive_one(store, clock, queue, lease=100)
    await change(store, clock, queue, first.receipt, 0)
    assert [d.message.body for d in await receive(store, clock, queue, n=1)] == ["first"]


async def test_fifo_other_groups_are_not_blocked(store: QueueStore, clock: FakeClock) -> None:
    queue = await make_queue(store, clock, "q.fifo")
    await send(
        store, clock, queue,
        fifo_message("a", body="a1"), fifo_message("b", body="b1"), fifo_message("a", body="a2"),
    )
    first = await receive_one(store, clock, queue)
    assert first.message.body == "a1"
    assert [d.message.body for d in await receive(store, clock, queue)] == ["b1"]


async def test_fifo_sequence_numbers_strictly_increase(store: QueueStore, clock: FakeClock) -> None:
    queue = await make_queue(store, clock, "q.fifo")
    first = await store.send(queue, [fifo_message("a"), fifo_message("b")], now=clock.now())
    second = await store.send(queue, [fifo_message("a")], now=clock.now())
    numbers = [r.sequence_number for r in first + second]
    assert all(n is not None for n in numbers)
    assert numbers == sorted(set(numbers))  # type: ignore[type-var]
    delivered = await receive(store, clock, queue)
    assert sorted(d.message.sequence_number for d in delivered) == numbers  # type: ignore[type-var]


async def test_fifo_duplicate_within_the_window_names_the_original(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock, "q.fifo")
    [original] = await store.send(queue, [fifo_message("g", "d1", "one")], now=clock.now())
    clock.advance(299)
    [again] = await store.send(queue, [fifo_message("g", "d1", "two")], now=clock.now())
    assert again.duplicate and not original.duplicate
    assert again.message_id == original.message_id
    assert again.sequence_number == original.sequence_number
    assert [d.message.body for d in await receive(store, clock, queue)] == ["one"]


async def test_fifo_duplicate_within_one_batch_is_enqueued_once(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock, "q.fifo")
    results = await store.send(
        queue, [fifo_message("g", "d1", "one"), fifo_message("g", "d1", "two")], now=clock.now()
    )
    assert [r.duplicate for r in results] == [False, True]
    assert results[1].message_id == results[0].message_id
    assert [d.message.body for d in await receive(store, clock, queue)] == ["one"]


async def test_fifo_dedup_window_holds_after_the_original_is_deleted(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock, "q.fifo")
    [original] = await store.send(queue, [fifo_message("g", "d1")], now=clock.now())
    await delete(store, clock, queue, (await receive_one(store, clock, queue)).receipt)
    [again] = await store.send(queue, [fifo_message("g", "d1")], now=clock.now())
    assert again.duplicate and again.message_id == original.message_id
    assert await receive(store, clock, queue) == []


async def test_fifo_purge_clears_the_deduplication_window(
    store: QueueStore, clock: FakeClock
) -> None:
    # AWS: after PurgeQueue a send with the same MessageDeduplicationId is delivered.
    queue = await make_queue(store, clock, "q.fifo")
    other = await make_queue(store, clock, "other.fifo")
    [original] = await store.send(queue, [fifo_message("g", "d1", "one")], now=clock.now())
    await store.send(other, [fifo_message("g", "d1", "kept")], now=clock.now())
    await store.purge(queue, now=clock.now())
    [again] = await store.send(queue, [fifo_message("g", "d1", "two")], now=clock.now())
    assert not again.duplicate and again.message_id != original.message_id
    assert [d.message.body for d in await receive(store, clock, queue)] == ["two"]
    # Only the purged queue forgot: the other queue's window still holds.
    [repeat] = await store.send(other, [fifo_message("g", "d1", "again")], now=clock.now())
    assert repeat.duplicate


async def test_fifo_dedup_id_can_be_reused_after_the_window(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock, "q.fifo")
    [original] = await store.send(queue, [fifo_message("g", "d1", "one")], now=clock.now())
    clock.advance(300)
    [again] = await store.send(queue, [fifo_message("g", "d1", "two")], now=clock.now())
    assert not again.duplicate and again.message_id != original.message_id
    assert again.sequence_number > original.sequence_number  # type: ignore[operator]
    assert [d.message.body for d in await receive(store, clock, queue)] == ["one", "two"]


async def test_fifo_dedup_ids_are_scoped_to_the_queue(store: QueueStore, clock: FakeClock) -> None:
    one = await make_queue(store, clock, "one.fifo")
    two = await make_queue(store, clock, "two.fifo")
    [a] = await store.send(one, [fifo_message("g", "d1")], now=clock.now())
    [b] = await store.send(two, [fifo_message("g", "d1")], now=clock.now())
    assert not b.duplicate and b.message_id != a.message_id


async def test_fifo_delivery_carries_group_dedup_id_and_sequence(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock, "q.fifo")
    [sent] = await store.send(queue, [fifo_message("g", "d1")], now=clock.now())
    delivery = await receive_one(store, clock, queue)
    assert delivery.message.group_id == "g"
    assert delivery.message.deduplication_id == "d1"
    assert delivery.message.sequence_number == sent.sequence_number
