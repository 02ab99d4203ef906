"""`discard`: an operator removes one message, whatever its state, without a receipt
(the console's "delete this message"). It is a deletion like DeleteMessage's: what the
message held (a lease, a live key, its FIFO group's turn) goes with it. And `peek`
shows each message's current fencing token, so the console can show it."""

from __future__ import annotations

import pytest

from hopper.core.clock import FakeClock
from hopper.core.errors import QueueNotFound
from hopper.core.model import ReceiptOutcome
from hopper.core.store import QueueStore

from .factories import (
    delete,
    fifo_message,
    key,
    make_queue,
    message,
    receive,
    receive_one,
    send,
)


async def bodies(store: QueueStore, clock: FakeClock, queue) -> list[str]:
    return [p.message.body for p in await store.peek(queue, limit=100, now=clock.now())]


async def test_discard_removes_a_visible_message_and_only_it(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    doomed, kept = message("doomed"), message("kept")
    await send(store, clock, queue, doomed, kept)
    assert await store.discard(queue, doomed.id, now=clock.now()) is True
    assert await bodies(store, clock, queue) == ["kept"]
    [delivery] = await receive(store, clock, queue)
    assert delivery.message.body == "kept"


async def test_discard_removes_an_in_flight_message_and_its_receipt_finds_it_gone(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await send(store, clock, queue, message("held"))
    held = await receive_one(store, clock, queue, lease=100)
    assert await store.discard(queue, held.message.id, now=clock.now()) is True
    assert (await store.stats(queue, now=clock.now())).in_flight == 0
    assert (await delete(store, clock, queue, held.receipt)).outcome is ReceiptOutcome.GONE


async def test_discard_removes_a_delayed_message(store: QueueStore, clock: FakeClock) -> None:
    queue = await make_queue(store, clock)
    later = message("later", delay=60.0)
    await send(store, clock, queue, later)
    assert await store.discard(queue, later.id, now=clock.now()) is True
    clock.advance(61)
    assert await receive(store, clock, queue) == []


async def test_discard_of_an_unknown_or_expired_message_is_false_and_changes_nothing(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock, message_retention_period=60.0)
    old = message("old")
    await send(store, clock, queue, old)
    clock.advance(30)
    await send(store, clock, queue, message("young"))
    assert await store.discard(queue, "no-such-message", now=clock.now()) is False
    clock.advance(30)
    assert await store.discard(queue, old.id, now=clock.now()) is False
    assert await bodies(store, clock, queue) == ["young"]


async def test_discard_twice_is_false_the_second_time(store: QueueStore, clock: FakeClock) -> None:
    queue = await make_queue(store, clock)
    once = message("once")
    await send(store, clock, queue, once)
    assert await store.discard(queue, once.id, now=clock.now()) is True
    assert await store.discard(queue, once.id, now=clock.now()) is False


async def test_discard_only_looks_in_its_own_queue(store: QueueStore, clock: FakeClock) -> None:
    one = await make_queue(store, clock, "one")
    other = await make_queue(store, clock, "other")
    elsewhere = message("elsewhere")
    await send(store, clock, other, elsewhere)
    assert await store.discard(one, elsewhere.id, now=clock.now()) is False
    assert await bodies(store, clock, other) == ["elsewhere"]


async def test_discard_in_a_missing_queue_raises_queue_not_found(
    store: QueueStore, clock: FakeClock
) -> None:
    with pytest.raises(QueueNotFound):
        await store.discard(key("missing"), "any", now=clock.now())


async def test_discard_frees_the_live_key_of_the_message(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    first = message("first", deduplication_id="job-1")
    await send(store, clock, queue, first)
    assert await store.discard(queue, first.id, now=clock.now()) is True
    second = message("second", deduplication_id="job-1")
    [result] = await store.send(queue, [second], now=clock.now())
    assert (result.message_id, result.duplicate) == (second.id, False)


async def test_discard_of_a_fifo_message_in_flight_lets_its_group_go_on(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock, "q.fifo")
    await send(store, clock, queue, fifo_message("g", body="m1"), fifo_message("g", body="m2"))
    first = await receive_one(store, clock, queue, lease=100)
    assert await receive(store, clock, queue) == []  # the group is held
    assert await store.discard(queue, first.message.id, now=clock.now()) is True
    [second] = await receive(store, clock, queue)
    assert second.message.body == "m2"


async def test_peek_shows_the_fencing_token_of_the_latest_delivery(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await send(store, clock, queue, message("taken"), message("waiting"))
    first = await receive_one(store, clock, queue, lease=0)
    again = await receive_one(store, clock, queue, lease=100)
    assert again.message.id == first.message.id and again.token > first.token
    peeked = {p.message.body: p for p in await store.peek(queue, limit=10, now=clock.now())}
    assert peeked["taken"].token == again.token
    assert peeked["waiting"].token == 0
