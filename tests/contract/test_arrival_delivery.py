"""Store contract: messages enqueued already delivered (NewMessage.lease), the store's
half of handing arriving messages to waiting long polls (core/handoff.py)."""

from __future__ import annotations

import pytest

from hopper.core.clock import FakeClock
from hopper.core.model import NewMessage, ReceiptOutcome
from hopper.core.store import QueueStore

from .factories import attributes, delete, make_queue, message, receive, receive_one


async def test_a_message_sent_with_a_lease_arrives_delivered(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    sent = message("payload", attributes=attributes(), trace_header="Root=1-abc", lease=30.0)
    [result] = await store.send(queue, [sent], now=clock.now())
    delivery = result.delivery
    assert delivery is not None
    assert result.message_id == sent.id
    assert delivery.message.id == sent.id
    assert delivery.message.body == "payload"
    assert delivery.message.attributes == attributes()
    assert delivery.message.trace_header == "Root=1-abc"
    assert delivery.message.sent_at == clock.time()
    assert delivery.receive_count == 1
    assert delivery.first_received_at == clock.time()
    assert delivery.visible_at == clock.time() + 30
    assert delivery.token > 0


async def test_a_message_delivered_on_arrival_is_in_flight_until_its_lease_runs_out(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    [result] = await store.send(queue, [message(lease=30.0)], now=clock.now())
    assert result.delivery is not None
    assert (await store.stats(queue, now=clock.now())).in_flight == 1
    assert await receive(store, clock, queue) == []
    clock.advance(31)
    again = await receive_one(store, clock, queue)
    assert again.receive_count == 2
    assert again.first_received_at == result.delivery.first_received_at
    assert again.token > result.delivery.token


async def test_the_receipt_of_a_delivery_on_arrival_deletes_and_is_fenced(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    [result] = await store.send(queue, [message(lease=5.0)], now=clock.now())
    assert result.delivery is not None
    clock.advance(6)
    newer = await receive_one(store, clock, queue)
    stale = await delete(store, clock, queue, result.delivery.receipt)
    assert stale.outcome is ReceiptOutcome.SUPERSEDED
    assert (await delete(store, clock, queue, newer.receipt)).outcome is ReceiptOutcome.OK


async def test_tokens_of_deliveries_on_arrival_come_from_the_claims_sequence(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await store.send(queue, [message()], now=clock.now())
    claimed = await receive_one(store, clock, queue)
    [result] = await store.send(queue, [message(lease=30.0)], now=clock.now())
    assert result.delivery is not None
    assert result.delivery.token > claimed.token


async def test_a_send_may_mix_messages_delivered_on_arrival_with_others(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    batch = [message("a", lease=30.0), message("b"), message("c", delay=10.0)]
    results = await store.send(queue, batch, now=clock.now())
    assert [r.message_id for r in results] == [m.id for m in batch]
    assert [r.delivery is not None for r in results] == [True, False, False]
    [visible] = await receive(store, clock, queue)
    assert visible.message.body == "b"
    stats = await store.stats(queue, now=clock.now())
    assert (stats.visible, stats.in_flight, stats.delayed) == (0, 2, 1)


@pytest.mark.parametrize(
    "sent",
    [
        message(lease=30.0, delay=5.0),
        message(lease=30.0, group_id="tenant"),
        message(lease=30.0, deduplication_id="live-key"),
    ],
    ids=["delayed", "grouped", "live-key"],
)
async def test_only_messages_a_claim_takes_at_once_may_arrive_delivered(
    store: QueueStore, clock: FakeClock, sent: NewMessage
) -> None:
    queue = await make_queue(store, clock)
    with pytest.raises(ValueError, match="already delivered"):
        await store.send(queue, [sent], now=clock.now())
    assert (await store.stats(queue, now=clock.now())).visible == 0


async def test_no_message_arrives_delivered_beside_a_live_key_or_under_a_ceiling(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    with pytest.raises(ValueError, match="already delivered"):
        await store.send(
            queue, [message(lease=30.0), message(deduplication_id="k")], now=clock.now()
        )
    with pytest.raises(ValueError, match="already delivered"):
        await store.send(queue, [message(lease=30.0)], now=clock.now(), max_depth=10)


async def test_no_fifo_message_arrives_delivered(store: QueueStore, clock: FakeClock) -> None:
    queue = await make_queue(store, clock, "q.fifo")
    with pytest.raises(ValueError, match="already delivered"):
        await store.send(queue, [message(lease=30.0)], now=clock.now())
