"""MessageRetentionPeriod over every store: expired messages are never delivered, and the
sweeper (store.sweep_expired, run by QueueService.housekeep) deletes them."""

from __future__ import annotations

import pytest

from hopper.core.clock import FakeClock
from hopper.core.errors import MessageNotAvailable
from hopper.core.model import DeadLetterRule, VisibilityChange
from hopper.core.service import QueueService
from hopper.core.store import QueueStore

from .factories import change, delete, make_queue, message, receive, receive_one, send

RETENTION = 60.0


async def test_an_expired_message_is_never_delivered_even_before_the_sweep(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock, message_retention_period=RETENTION)
    await send(store, clock, queue)
    clock.advance(RETENTION)
    assert await receive(store, clock, queue) == []
    stats = await store.stats(queue, now=clock.now())
    assert (stats.visible, stats.in_flight, stats.delayed) == (0, 0, 0)


async def test_a_message_is_delivered_until_its_retention_period_ends(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock, message_retention_period=RETENTION)
    await send(store, clock, queue)
    clock.advance(RETENTION - 0.5)
    assert len(await receive(store, clock, queue)) == 1
    assert await store.sweep_expired(limit=10, now=clock.now()) == 0


async def test_the_sweep_deletes_expired_messages_of_every_queue_and_counts_them(
    store: QueueStore, clock: FakeClock
) -> None:
    short = await make_queue(store, clock, "short", message_retention_period=RETENTION)
    other = await make_queue(store, clock, "other", message_retention_period=RETENTION)
    kept = await make_queue(store, clock, "kept")
    await send(store, clock, short, message(), message())
    await send(store, clock, other, message())
    await send(store, clock, kept, message())
    clock.advance(RETENTION / 2)
    fresh = message("fresh")
    await send(store, clock, short, fresh)
    clock.advance(RETENTION / 2)
    assert await store.sweep_expired(limit=10, now=clock.now()) == 3
    assert await store.sweep_expired(limit=10, now=clock.now()) == 0
    assert [d.message.id for d in await receive(store, clock, short)] == [fresh.id]
    assert len(await receive(store, clock, kept)) == 1


async def test_the_sweep_deletes_at_most_its_limit_per_call(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock, message_retention_period=RETENTION)
    await send(store, clock, queue, *[message() for _ in range(5)])
    clock.advance(RETENTION)
    assert [await store.sweep_expired(limit=2, now=clock.now()) for _ in range(4)] == [2, 2, 1, 0]


async def test_in_flight_expired_messages_are_swept_and_their_receipt_finds_them_gone(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock, message_retention_period=RETENTION)
    await send(store, clock, queue)
    held = await receive_one(store, clock, queue, lease=10 * RETENTION)
    clock.advance(RETENTION)
    assert await store.sweep_expired(limit=10, now=clock.now()) == 1
    assert (await delete(store, clock, queue, held.receipt)).outcome.value == "gone"
    assert (await change(store, clock, queue, held.receipt, 5)).outcome.value == "gone"


async def test_a_stale_receipt_after_the_sweep_behaves_as_for_a_deleted_message(
    service: QueueService, clock: FakeClock
) -> None:
    queue = await make_queue(service.store, clock, message_retention_period=RETENTION)
    await send(service.store, clock, queue)
    [held] = await service.receive(queue, visibility_timeout=600)
    clock.advance(RETENTION)
    assert await service.housekeep() == 1
    await service.delete(queue, held.receipt)  # deleting a gone message succeeds
    with pytest.raises(MessageNotAvailable):
        await service.change_visibility(queue, VisibilityChange(held.receipt, 5))


async def test_housekeeping_sweeps_in_rounds_until_nothing_expired_is_left(
    service: QueueService, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("hopper.core.housekeeping.SWEEP_BATCH", 2)
    queue = await make_queue(service.store, clock, message_retention_period=RETENTION)
    await send(service.store, clock, queue, *[message() for _ in range(5)])
    clock.advance(RETENTION)
    assert await service.housekeep() == 5
    assert await service.housekeep() == 0


async def test_a_dead_letter_expires_by_its_original_send_time(
    store: QueueStore, clock: FakeClock
) -> None:
    dlq = await make_queue(store, clock, "dlq", message_retention_period=RETENTION)
    source = await make_queue(store, clock, "source", dead_letter=DeadLetterRule(dlq, 1))
    await send(store, clock, source)
    await receive_one(store, clock, source, lease=RETENTION / 2)
    clock.advance(RETENTION / 2)
    assert await receive(store, clock, source) == []  # moved to the dead-letter queue
    assert (await store.stats(dlq, now=clock.now())).visible == 1
    clock.advance(RETENTION / 2)
    assert await receive(store, clock, dlq) == []
