"""FIFO dead letters over every store: poison messages leave their group in order and
unblock it, and move tasks (redrive) give up and deliver each group in order."""

from __future__ import annotations

import pytest

from hopper.core.clock import FakeClock
from hopper.core.model import DeadLetterRule, MoveTaskStatus, NewMessage, QueueKey
from hopper.core.move_tasks import MoveTasks
from hopper.core.service import QueueService
from hopper.core.store import QueueStore

from .factories import (
    config,
    delete,
    fifo_message,
    make_dead_letter_pair,
    make_queue,
    receive,
    send,
)


def bodies_of(deliveries: list) -> list[str]:
    return [d.message.body for d in deliveries]


async def poison(
    store: QueueStore, clock: FakeClock, source: QueueKey, *messages: NewMessage
) -> None:
    """Send `messages` to `source` (max_receive_count 1) and receive them once each, so
    that the next receive moves them to the dead-letter queue, in order."""
    await send(store, clock, source, *messages)
    delivered = 0
    while delivered < len(messages):
        got = await receive(store, clock, source, lease=1)
        delivered += len(got)
        clock.advance(1)
    assert await receive(store, clock, source) == []


async def test_poison_messages_reach_the_dead_letter_queue_in_group_order(
    store: QueueStore, clock: FakeClock
) -> None:
    source, target = await make_dead_letter_pair(store, clock, max_receive_count=1, fifo=True)
    messages = [fifo_message(g, body=f"{g}{n}") for n, g in enumerate("abab")]
    await poison(store, clock, source, *messages)
    arrived = await receive(store, clock, target)
    # Each group's run whole, as a FIFO receive takes them (SQS-NOTES 5.11).
    assert bodies_of(arrived) == ["a0", "a2", "b1", "b3"]
    # They keep their group and sequence number: the dead-letter queue is itself FIFO.
    assert [d.message.group_id for d in arrived] == ["a", "a", "b", "b"]
    # Each keeps its receive count: one receive from the source, one from here.
    assert [d.receive_count for d in arrived] == [2, 2, 2, 2]
    numbers = [d.message.sequence_number or 0 for d in arrived]
    assert numbers[0] < numbers[1] and numbers[2] < numbers[3]


async def test_the_dead_letter_queue_locks_groups_like_any_fifo_queue(
    store: QueueStore, clock: FakeClock
) -> None:
    source, target = await make_dead_letter_pair(store, clock, max_receive_count=1, fifo=True)
    await poison(store, clock, source, fifo_message("g", body="one"), fifo_message("g", body="two"))
    [head] = await receive(store, clock, target, n=1)
    assert head.message.body == "one"
    assert await receive(store, clock, target) == []
    await delete(store, clock, target, head.receipt)
    assert bodies_of(await receive(store, clock, target)) == ["two"]


async def test_a_redrive_moves_each_group_back_in_order(
    store: QueueStore, clock: FakeClock
) -> None:
    source, target = await make_dead_letter_pair(store, clock, max_receive_count=1, fifo=True)
    await poison(
        store, clock, source, *[fifo_message(g, body=f"{g}{n}") for n, g in enumerate("aabb")]
    )
    # Two at a time: order holds across the steps of a task, too.
    assert await store.move_messages(target, None, limit=2, now=clock.now()) == 2
    assert await store.move_messages(target, None, limit=2, now=clock.now()) == 2
    back = await receive(store, clock, source)
    assert bodies_of(back) == ["a0", "a1", "b2", "b3"]
    assert [d.receive_count for d in back] == [1, 1, 1, 1]


async def test_a_redrive_does_not_move_a_group_past_its_message_in_flight(
    store: QueueStore, clock: FakeClock
) -> None:
    source, target = await make_dead_letter_pair(store, clock, max_receive_count=1, fifo=True)
    await poison(
        store, clock, source, *[fifo_message(g, body=f"{g}{n}") for n, g in enumerate("aab")]
    )
    [held] = await receive(store, clock, target, n=1, lease=60)
    assert held.message.body == "a0"
    # a1 waits behind a0, which someone is working on; b2 goes.
    assert await store.move_messages(target, None, limit=10, now=clock.now()) == 1
    assert bodies_of(await receive(store, clock, source)) == ["b2"]
    await delete(store, clock, target, held.receipt)
    assert await store.move_messages(target, None, limit=10, now=clock.now()) == 1
    assert bodies_of(await receive(store, clock, source)) == ["a1"]


async def test_a_redrive_to_a_named_fifo_queue_keeps_group_order(
    store: QueueStore, clock: FakeClock
) -> None:
    source, target = await make_dead_letter_pair(store, clock, max_receive_count=1, fifo=True)
    other = await make_queue(store, clock, "other.fifo")
    await poison(store, clock, source, *[fifo_message("g", body=f"m{n}") for n in range(3)])
    assert await store.move_messages(target, other, limit=10, now=clock.now()) == 3
    [first] = await receive(store, clock, other, n=1)
    assert first.message.body == "m0"
    assert await receive(store, clock, other) == []
    await delete(store, clock, other, first.receipt)
    assert bodies_of(await receive(store, clock, other)) == ["m1", "m2"]


async def test_a_move_task_on_a_fifo_dead_letter_queue_runs_to_completion(
    service: QueueService, store: QueueStore, clock: FakeClock
) -> None:
    source, target = await make_dead_letter_pair(store, clock, max_receive_count=1, fifo=True)
    await poison(
        store, clock, source, *[fifo_message(g, body=f"{g}{n}") for n, g in enumerate("abab")]
    )
    tasks = MoveTasks(store, clock, service.wakeups.notify)
    task = await tasks.start(target, None, max_per_second=None)
    task = await tasks.step(task)
    assert (task.status, task.moved) == (MoveTaskStatus.COMPLETED, 4)
    assert bodies_of(await receive(store, clock, source)) == ["a0", "a2", "b1", "b3"]


# --- a FIFO queue that is its own dead-letter queue ---------------------------------------
# A message it moves goes to its group's tail: the receive that moved it looks again and
# delivers it after what it took already, behind its group's other messages.


async def own_dead_letter_queue(store: QueueStore, clock: FakeClock) -> QueueKey:
    queue = await make_queue(store, clock, "self.fifo")
    rule = DeadLetterRule(queue, 1)
    await store.update_queue(queue, config(fifo=True, dead_letter=rule), now=clock.now())
    return queue


async def test_a_message_moved_to_its_own_queue_comes_after_the_runs_the_receive_took(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await own_dead_letter_queue(store, clock)
    first, second = fifo_message("g1", body="g1-a"), fifo_message("g2", body="g2-a")
    await send(store, clock, queue, first, second)
    assert bodies_of(await receive(store, clock, queue, n=1, lease=1)) == ["g1-a"]
    clock.advance(1)
    await send(store, clock, queue, fifo_message("g3", body="g3-a"))
    # g2-a has waited longest; g1-a, whose lease ended with g3-a's send, moves to the
    # tail and is delivered once the runs found before it was moved are taken.
    assert bodies_of(await receive(store, clock, queue)) == ["g2-a", "g3-a", "g1-a"]


async def test_a_message_moved_to_its_own_queue_follows_its_group_in_the_same_receive(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await own_dead_letter_queue(store, clock)
    await send(store, clock, queue, fifo_message("g", body="a"), fifo_message("g", body="b"))
    assert bodies_of(await receive(store, clock, queue, n=1, lease=1)) == ["a"]
    clock.advance(1)
    # "a" moves behind "b": the receive takes "b", then finds "a" at the group's tail.
    assert bodies_of(await receive(store, clock, queue)) == ["b", "a"]


# --- arrivals after sends: a message dead-lettered or moved into a FIFO queue arrives
# behind what was sent there before it, as a send would


async def test_a_poison_message_arrives_behind_a_send_to_its_dead_letter_queue(
    store: QueueStore, clock: FakeClock
) -> None:
    source, target = await make_dead_letter_pair(store, clock, max_receive_count=1, fifo=True)
    await send(store, clock, source, fifo_message("g", body="g1"))
    assert bodies_of(await receive(store, clock, source, lease=1)) == ["g1"]
    clock.advance(1)
    await send(store, clock, target, fifo_message("g", body="g2"))
    assert await receive(store, clock, source) == []  # g1 is dead-lettered
    assert bodies_of(await receive(store, clock, target)) == ["g2", "g1"]


@pytest.mark.parametrize("named", [True, False], ids=["to-a-queue", "back-to-the-source"])
async def test_a_redriven_message_arrives_behind_a_send_to_its_destination(
    store: QueueStore, clock: FakeClock, named: bool
) -> None:
    source, target = await make_dead_letter_pair(store, clock, max_receive_count=1, fifo=True)
    await poison(store, clock, source, fifo_message("g", body="g1"))
    await send(store, clock, source, fifo_message("g", body="g2"))
    destination = source if named else None
    assert await store.move_messages(target, destination, limit=10, now=clock.now()) == 1
    assert bodies_of(await receive(store, clock, source)) == ["g2", "g1"]
