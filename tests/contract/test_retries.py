"""Store contract: Hopper.RetryPolicy, the backoff after a lease ends without a delete.

A delivery's lease runs out (or is released with a zero visibility timeout) and the
message is receivable again only after `delay_after(receives)` seconds (core/retries.py),
decided inside the store's claim. The dead-letter rule still decides when it stops.
"""

from __future__ import annotations

import pytest

from hopper.core.clock import FakeClock
from hopper.core.model import DeadLetterRule, ReceiptOutcome
from hopper.core.operators import MessageState, state_of
from hopper.core.retries import RetryPolicy
from hopper.core.store import QueueStore

from .factories import (
    change,
    delete,
    fifo_message,
    make_queue,
    message,
    receive,
    receive_one,
    send,
)

STEADY = RetryPolicy(base=4, maximum=100, jitter="none")


async def test_lease_that_runs_out_hides_the_message_for_its_backoff(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock, retry_policy=STEADY)
    await send(store, clock, queue)
    first = await receive_one(store, clock, queue, lease=10)
    assert first.visible_at == clock.time() + 10  # the lease's end, as without a policy
    clock.advance(10 + 3.9)
    assert await receive(store, clock, queue) == []
    clock.advance(0.1)
    second = await receive_one(store, clock, queue, lease=10)
    assert second.receive_count == 2
    # the second lease's backoff doubles: base * 2^(2-1)
    clock.advance(10 + 7.9)
    assert await receive(store, clock, queue) == []
    clock.advance(0.1)
    assert (await receive_one(store, clock, queue)).receive_count == 3


async def test_backoff_stops_growing_at_the_maximum(store: QueueStore, clock: FakeClock) -> None:
    queue = await make_queue(
        store, clock, retry_policy=RetryPolicy(base=4, maximum=6, jitter="none")
    )
    await send(store, clock, queue)
    for backoff in (4, 6, 6):
        await receive_one(store, clock, queue, lease=1)
        clock.advance(1 + backoff - 0.1)
        assert await receive(store, clock, queue) == []
        clock.advance(0.1)
    assert (await receive_one(store, clock, queue)).receive_count == 4


async def test_release_with_zero_visibility_backs_off(store: QueueStore, clock: FakeClock) -> None:
    queue = await make_queue(store, clock, retry_policy=STEADY)
    await send(store, clock, queue)
    delivery = await receive_one(store, clock, queue, lease=30)
    clock.advance(2)
    assert (await change(store, clock, queue, delivery.receipt, 0)).outcome is ReceiptOutcome.OK
    clock.advance(3.9)
    assert await receive(store, clock, queue) == []
    clock.advance(0.1)
    assert len(await receive(store, clock, queue)) == 1


async def test_extended_lease_is_followed_by_its_backoff(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock, retry_policy=STEADY)
    await send(store, clock, queue)
    delivery = await receive_one(store, clock, queue, lease=10)
    assert (await change(store, clock, queue, delivery.receipt, 20)).outcome is ReceiptOutcome.OK
    clock.advance(20 + 3.9)
    assert await receive(store, clock, queue) == []
    clock.advance(0.1)
    assert len(await receive(store, clock, queue)) == 1


async def test_backoff_counts_as_delayed_not_in_flight(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock, retry_policy=STEADY)
    await send(store, clock, queue)
    await receive_one(store, clock, queue, lease=10)
    during_lease = await store.stats(queue, now=clock.now())
    assert (during_lease.visible, during_lease.in_flight, during_lease.delayed) == (0, 1, 0)
    assert await store.count_in_flight(queue, now=clock.now()) == 1
    clock.advance(11)
    backing_off = await store.stats(queue, now=clock.now())
    assert (backing_off.visible, backing_off.in_flight, backing_off.delayed) == (0, 0, 1)
    assert await store.count_in_flight(queue, now=clock.now()) == 0
    assert await store.next_visible_at(queue, now=clock.now()) == clock.time() + 3
    [peeked] = await store.peek(queue, limit=1, now=clock.now())
    assert (peeked.visible_at, peeked.retry_delay) == (clock.time() + 3, 4)
    assert state_of(peeked, clock.time()) is MessageState.DELAYED
    assert state_of(peeked, clock.time() - 2) is MessageState.IN_FLIGHT
    clock.advance(3)
    after = await store.stats(queue, now=clock.now())
    assert (after.visible, after.in_flight, after.delayed) == (1, 0, 0)


async def test_receipt_whose_lease_ended_still_deletes_during_the_backoff(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock, retry_policy=STEADY)
    await send(store, clock, queue)
    delivery = await receive_one(store, clock, queue, lease=10)
    clock.advance(11)
    refused = await delete(store, clock, queue, delivery.receipt, refuse_expired=True)
    assert refused.outcome is ReceiptOutcome.EXPIRED
    assert (await delete(store, clock, queue, delivery.receipt)).outcome is ReceiptOutcome.OK
    clock.advance(10)
    assert await receive(store, clock, queue) == []


async def test_dead_letter_rule_still_decides_and_its_last_lease_has_no_backoff(
    store: QueueStore, clock: FakeClock
) -> None:
    target = await make_queue(store, clock, "dlq")
    source = await make_queue(
        store, clock, "source", retry_policy=STEADY, dead_letter=DeadLetterRule(target, 2)
    )
    await send(store, clock, source)
    await receive_one(store, clock, source, lease=1)
    clock.advance(1 + 4)
    await receive_one(store, clock, source, lease=1)
    # the second receive was the last: no retry follows, so no backoff before the move
    clock.advance(1)
    assert await receive(store, clock, source) == []
    [moved] = await receive(store, clock, target)
    assert moved.receive_count == 3


async def test_fifo_group_waits_for_its_head_to_back_off(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock, "q.fifo", retry_policy=STEADY)
    first, second = fifo_message("g", body="first"), fifo_message("g", body="second")
    await send(store, clock, queue, first, second)
    assert [d.message.body for d in await receive(store, clock, queue, n=1, lease=5)] == ["first"]
    clock.advance(5 + 3.9)
    assert await receive(store, clock, queue) == []
    clock.advance(0.1)
    assert [d.message.body for d in await receive(store, clock, queue)] == ["first", "second"]


async def test_equal_jitter_keeps_at_least_half_the_backoff(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(
        store, clock, retry_policy=RetryPolicy(base=8, maximum=8, jitter="equal")
    )
    await send(store, clock, queue, *[message(f"m{i}") for i in range(50)])
    for _ in range(5):
        await receive(store, clock, queue, n=10, lease=1)
    clock.advance(1 + 3.99)
    assert (await store.stats(queue, now=clock.now())).visible == 0
    clock.advance(4.01)
    assert (await store.stats(queue, now=clock.now())).visible == 50


async def test_full_jitter_spreads_the_retries_instead_of_synchronizing_them(
    store: QueueStore, clock: FakeClock
) -> None:
    # given 200 messages whose leases all end at the same moment
    queue = await make_queue(
        store, clock, retry_policy=RetryPolicy(base=8, maximum=8, jitter="full")
    )
    for batch in range(20):
        await send(store, clock, queue, *[message(f"m{batch}-{i}") for i in range(10)])
    for _ in range(20):
        assert len(await receive(store, clock, queue, n=10, lease=1)) == 10
    clock.advance(1)
    # when the clock walks through the backoff's range a second at a time
    visible = []
    for _ in range(8):
        clock.advance(1)
        visible.append((await store.stats(queue, now=clock.now())).visible)
    # then each second lets some of them back (expected 25 of 200; 5..50 is more than
    # four standard deviations either way), and all are back once the ceiling passed
    arrivals = [b - a for a, b in zip([0, *visible], visible, strict=False)]
    assert all(5 <= count <= 50 for count in arrivals), arrivals
    assert visible[-1] == 200


async def test_a_jittered_backoff_follows_the_lease_it_was_drawn_for(
    store: QueueStore, clock: FakeClock
) -> None:
    # given a queue whose deliveries each draw their backoff at random
    queue = await make_queue(
        store, clock, retry_policy=RetryPolicy(base=8, maximum=8, jitter="full")
    )
    await send(store, clock, queue, *[message(f"m{i}") for i in range(10)])
    # when one claim delivers several messages
    deliveries = await receive(store, clock, queue, n=10, lease=5)
    # then each lease ends when asked, the one draw only after it: the deadline and the
    # backoff a store keeps are of the same draw
    assert [d.visible_at for d in deliveries] == pytest.approx([clock.time() + 5] * 10)
