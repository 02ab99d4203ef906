"""Store contract: receipts are checked against the message's current delivery."""

from __future__ import annotations

from hopper.core.clock import FakeClock
from hopper.core.model import Receipt, ReceiptOutcome, ReceiptResult, VisibilityChange
from hopper.core.store import QueueStore

from .factories import change, delete, make_queue, message, receive, receive_one, send

OK = ReceiptResult(ReceiptOutcome.OK)
GONE = ReceiptResult(ReceiptOutcome.GONE)
EXPIRED = ReceiptResult(ReceiptOutcome.EXPIRED)


async def test_delete_with_current_receipt_deletes(store: QueueStore, clock: FakeClock) -> None:
    queue = await make_queue(store, clock)
    await send(store, clock, queue)
    delivery = await receive_one(store, clock, queue, lease=1)
    assert await delete(store, clock, queue, delivery.receipt) == OK
    clock.advance(10)
    assert await receive(store, clock, queue) == []


async def test_delete_after_delete_is_gone(store: QueueStore, clock: FakeClock) -> None:
    queue = await make_queue(store, clock)
    await send(store, clock, queue)
    delivery = await receive_one(store, clock, queue)
    await delete(store, clock, queue, delivery.receipt)
    assert await delete(store, clock, queue, delivery.receipt) == GONE


async def test_receipt_of_unknown_message_is_gone(store: QueueStore, clock: FakeClock) -> None:
    queue = await make_queue(store, clock)
    assert await delete(store, clock, queue, Receipt("no-such-message", 1)) == GONE


async def test_receipt_for_a_message_of_another_queue_is_gone(
    store: QueueStore, clock: FakeClock
) -> None:
    one = await make_queue(store, clock, "one")
    two = await make_queue(store, clock, "two")
    await send(store, clock, one)
    delivery = await receive_one(store, clock, one)
    assert await delete(store, clock, two, delivery.receipt) == GONE
    assert await delete(store, clock, one, delivery.receipt) == OK


async def test_superseded_receipt_does_not_delete_and_names_the_current_token(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await send(store, clock, queue)
    old = await receive_one(store, clock, queue, lease=1)
    clock.advance(1)
    new = await receive_one(store, clock, queue, lease=30)
    result = await delete(store, clock, queue, old.receipt)
    assert result == ReceiptResult(ReceiptOutcome.SUPERSEDED, current_token=new.token)
    assert await delete(store, clock, queue, new.receipt) == OK


async def test_superseded_receipt_does_not_change_visibility(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await send(store, clock, queue)
    old = await receive_one(store, clock, queue, lease=1)
    clock.advance(1)
    new = await receive_one(store, clock, queue, lease=30)
    result = await change(store, clock, queue, old.receipt, 0)
    assert result == ReceiptResult(ReceiptOutcome.SUPERSEDED, current_token=new.token)
    assert await receive(store, clock, queue) == []


async def test_expired_receipt_that_is_not_superseded_still_deletes(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await send(store, clock, queue)
    delivery = await receive_one(store, clock, queue, lease=5)
    clock.advance(60)
    assert await delete(store, clock, queue, delivery.receipt) == OK
    assert await receive(store, clock, queue) == []


async def test_expired_receipt_is_refused_when_asked(store: QueueStore, clock: FakeClock) -> None:
    queue = await make_queue(store, clock)
    await send(store, clock, queue)
    delivery = await receive_one(store, clock, queue, lease=5)
    clock.advance(5)
    assert await delete(store, clock, queue, delivery.receipt, refuse_expired=True) == EXPIRED
    assert await change(store, clock, queue, delivery.receipt, 10, refuse_expired=True) == EXPIRED
    assert len(await receive(store, clock, queue)) == 1


async def test_live_receipt_is_accepted_when_expired_ones_are_refused(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await send(store, clock, queue)
    delivery = await receive_one(store, clock, queue, lease=5)
    clock.advance(4)
    assert await delete(store, clock, queue, delivery.receipt, refuse_expired=True) == OK


async def test_change_visibility_of_a_deleted_message_is_gone(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await send(store, clock, queue)
    delivery = await receive_one(store, clock, queue)
    await delete(store, clock, queue, delivery.receipt)
    assert await change(store, clock, queue, delivery.receipt, 10) == GONE


async def test_change_visibility_with_expired_receipt_leases_again(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await send(store, clock, queue)
    delivery = await receive_one(store, clock, queue, lease=5)
    clock.advance(10)
    assert await change(store, clock, queue, delivery.receipt, 30) == OK
    assert await receive(store, clock, queue) == []


async def test_batch_outcomes_come_back_per_receipt_in_order(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await send(store, clock, queue, message("a"), message("b"))
    a, b = await receive(store, clock, queue)
    results = await store.delete(
        queue,
        [a.receipt, Receipt("unknown", 1), b.receipt, a.receipt],
        refuse_expired=False,
        now=clock.now(),
    )
    assert results == [OK, GONE, OK, GONE]


async def test_receipts_naming_ids_with_quotes_commas_and_braces_keep_their_places(
    store: QueueStore, clock: FakeClock
) -> None:
    # Text that would be an array's syntax (PostgreSQL's deletes take a statement's
    # receipts as arrays) names no message, and each receipt keeps its place.
    queue = await make_queue(store, clock)
    await send(store, clock, queue, message("a"), message("b"))
    a, b = await receive(store, clock, queue)
    odd = [Receipt(text, 1) for text in ('x"y', "x\\y", "x,y}", "{x", "", "NULL", " x ")]
    results = await store.delete(
        queue, [a.receipt, *odd, b.receipt], refuse_expired=False, now=clock.now()
    )
    assert results == [OK, *[GONE] * len(odd), OK]


async def test_change_visibility_batch_outcomes_come_back_in_order(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await send(store, clock, queue, message("a"), message("b"))
    a, b = await receive(store, clock, queue, lease=30)
    results = await store.change_visibility(
        queue,
        [VisibilityChange(a.receipt, 0), VisibilityChange(Receipt("unknown", 1), 0),
         VisibilityChange(b.receipt, 100)],
        refuse_expired=False,
        now=clock.now(),
    )
    assert results == [OK, GONE, OK]
    assert [d.message.body for d in await receive(store, clock, queue)] == ["a"]


async def test_purged_message_receipt_is_gone(store: QueueStore, clock: FakeClock) -> None:
    queue = await make_queue(store, clock)
    await send(store, clock, queue)
    delivery = await receive_one(store, clock, queue)
    await store.purge(queue, now=clock.now())
    assert await delete(store, clock, queue, delivery.receipt) == GONE
