"""Store contract: redrive to the dead-letter queue inside receive."""

from __future__ import annotations

from hopper.core.clock import FakeClock
from hopper.core.model import DeadLetterRule, ReceiptOutcome
from hopper.core.store import QueueStore

from .factories import (
    attributes,
    config,
    delete,
    fifo_message,
    key,
    make_dead_letter_pair,
    make_queue,
    message,
    receive,
    receive_one,
    send,
)


async def test_message_received_max_receive_count_times_moves_on_the_next_receive(
    store: QueueStore, clock: FakeClock
) -> None:
    source, target = await make_dead_letter_pair(store, clock, max_receive_count=2)
    sent = message("poison", attributes=attributes(), trace_header="Root=1")
    sent_at = clock.time()
    await send(store, clock, source, sent)
    for _ in range(2):
        assert len(await receive(store, clock, source, lease=1)) == 1
        clock.advance(1)
    assert await receive(store, clock, source) == []
    [moved] = await receive(store, clock, target)
    assert moved.message.id == sent.id
    assert moved.message.body == "poison"
    assert moved.message.attributes == attributes()
    assert moved.message.trace_header == "Root=1"
    assert moved.message.sent_at == sent_at
    assert moved.message.dead_letter_source == source


async def test_a_dead_letter_keeps_its_receive_count_and_the_move_is_no_receive(
    store: QueueStore, clock: FakeClock
) -> None:
    # AWS: ApproximateReceiveCount is "the number of times a message has been received
    # across all queues but not deleted". (This pinned a reset to 1 before.)
    source, target = await make_dead_letter_pair(store, clock, max_receive_count=2)
    await send(store, clock, source)
    first = await receive_one(store, clock, source, lease=1)
    clock.advance(1)
    await receive_one(store, clock, source, lease=1)
    clock.advance(1)
    assert await receive(store, clock, source) == []  # this receive moved it
    [dead] = await store.peek(target, limit=10, now=clock.now())
    assert dead.receive_count == 2
    clock.advance(1)
    moved = await receive_one(store, clock, target, lease=1)
    assert moved.receive_count == 3
    assert moved.first_received_at == first.first_received_at
    clock.advance(1)
    assert (await receive_one(store, clock, target)).receive_count == 4


async def test_a_dead_letters_next_delivery_carries_a_greater_fencing_token(
    store: QueueStore, clock: FakeClock
) -> None:
    source, target = await make_dead_letter_pair(store, clock, max_receive_count=1)
    await send(store, clock, source)
    before = await receive_one(store, clock, source, lease=1)
    clock.advance(1)
    assert await receive(store, clock, source) == []
    moved = await receive_one(store, clock, target)
    assert moved.token > before.token
    # The receipt from the source names no delivery in the dead-letter queue.
    assert (await delete(store, clock, target, before.receipt)).outcome is not ReceiptOutcome.OK
    assert (await delete(store, clock, target, moved.receipt)).outcome is ReceiptOutcome.OK


# --- a dead-letter queue with a dead-letter rule of its own --------------------------------
# AWS documents nothing here. A queue's maxReceiveCount counts the receives made from
# it: the count a message carried in is not counted again, so no queue on the way moves
# a message it never delivered, a cycle never passes one round undelivered, and a
# receive moves a message at most once.


async def test_a_dead_letter_queue_moves_on_only_after_its_own_receives(
    store: QueueStore, clock: FakeClock
) -> None:
    last = await make_queue(store, clock, "last")
    dlq = await make_queue(store, clock, "dlq", dead_letter=DeadLetterRule(last, 1))
    source = await make_queue(store, clock, "source", dead_letter=DeadLetterRule(dlq, 1))
    await send(store, clock, source)
    await receive_one(store, clock, source, lease=1)
    clock.advance(1)
    assert await receive(store, clock, source) == []
    # It carried a count of 1 into a queue whose own maxReceiveCount is 1: delivered
    # from there once all the same, moved on by the next receive.
    assert (await receive_one(store, clock, dlq, lease=1)).receive_count == 2
    clock.advance(1)
    assert await receive(store, clock, dlq) == []
    [arrived] = await receive(store, clock, last)
    assert (arrived.receive_count, arrived.message.dead_letter_source) == (3, dlq)


async def test_a_dead_letter_cycle_delivers_the_message_from_every_queue(
    store: QueueStore, clock: FakeClock
) -> None:
    one = key("one")
    two = await make_queue(store, clock, "two")
    await make_queue(store, clock, "one", dead_letter=DeadLetterRule(two, 1))
    await store.update_queue(two, config(dead_letter=DeadLetterRule(one, 1)), now=clock.now())
    await send(store, clock, one)
    counts = []
    for queue in [one, two, one, two]:
        counts.append((await receive_one(store, clock, queue, lease=1)).receive_count)
        clock.advance(1)
        assert await receive(store, clock, queue) == []  # moved to the other one
    assert counts == [1, 2, 3, 4]
    assert (await receive_one(store, clock, one)).receive_count == 5


async def test_a_queue_that_is_its_own_dead_letter_queue_moves_a_message_once_a_receive(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await store.update_queue(queue, config(dead_letter=DeadLetterRule(queue, 1)), now=clock.now())
    await send(store, clock, queue)
    assert (await receive_one(store, clock, queue, lease=1)).receive_count == 1
    for count in (2, 3):
        clock.advance(1)
        # The receive moves it to the tail of its own queue, once, and delivers it.
        [again] = await receive(store, clock, queue, lease=1)
        assert again.receive_count == count
        assert again.message.dead_letter_source == queue
    assert store.dead_lettered()[queue] == 2


async def test_a_receive_that_moves_a_message_delivers_each_other_one_once(
    store: QueueStore, clock: FakeClock
) -> None:
    source, target = await make_dead_letter_pair(store, clock, max_receive_count=1)
    await send(store, clock, source, message("poison"))
    await receive_one(store, clock, source, lease=0)
    await send(store, clock, source, message("fresh"))
    # A zero lease leaves "fresh" visible at once; the receive still delivers it once.
    assert [d.message.body for d in await receive(store, clock, source, lease=0)] == ["fresh"]
    assert [d.message.body for d in await receive(store, clock, target)] == ["poison"]


async def test_moved_message_is_gone_from_the_source(store: QueueStore, clock: FakeClock) -> None:
    source, target = await make_dead_letter_pair(store, clock, max_receive_count=1)
    await send(store, clock, source)
    [delivery] = await receive(store, clock, source, lease=1)
    clock.advance(1)
    assert await receive(store, clock, source) == []
    stats = await store.stats(source, now=clock.now())
    assert (stats.visible, stats.in_flight, stats.delayed) == (0, 0, 0)
    [result] = await store.delete(
        source, [delivery.receipt], refuse_expired=False, now=clock.now()
    )
    assert result.outcome.value == "gone"
    assert (await store.stats(target, now=clock.now())).visible == 1


async def test_healthy_messages_are_delivered_while_poison_moves(
    store: QueueStore, clock: FakeClock
) -> None:
    source, target = await make_dead_letter_pair(store, clock, max_receive_count=1)
    await send(store, clock, source, message("poison"))
    await receive(store, clock, source, lease=1)
    await send(store, clock, source, message("fresh"))
    clock.advance(1)
    assert [d.message.body for d in await receive(store, clock, source)] == ["fresh"]
    assert [d.message.body for d in await receive(store, clock, target)] == ["poison"]


async def test_fifo_poison_message_moves_and_unblocks_its_group(
    store: QueueStore, clock: FakeClock
) -> None:
    source, target = await make_dead_letter_pair(store, clock, max_receive_count=1, fifo=True)
    poison, after = fifo_message("g", body="poison"), fifo_message("g", body="next")
    await send(store, clock, source, poison, after)
    [first] = await receive(store, clock, source, n=1, lease=1)
    assert first.message.body == "poison"
    clock.advance(1)
    assert [d.message.body for d in await receive(store, clock, source)] == ["next"]
    assert [d.message.body for d in await receive(store, clock, target)] == ["poison"]
