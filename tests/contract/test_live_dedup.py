"""Store contract: live deduplication on standard queues (a hopper extension).

A deduplication id sent to a standard queue is a live key: while the message that
took it is in the queue, sends with the key collapse onto it; once the message is
gone (deleted, expired, purged, dead-lettered, moved away) the key is free. Unlike
FIFO's window, nothing here depends on how long ago the key was first sent.
"""

from __future__ import annotations

import pytest

from hopper.core.clock import FakeClock
from hopper.core.errors import InvalidParameter
from hopper.core.model import MessageDraft, NewMessage, QueueKey, SendResult
from hopper.core.service import QueueService
from hopper.core.store import QueueStore

from .factories import (
    delete,
    key,
    make_dead_letter_pair,
    make_queue,
    message,
    receive,
    receive_one,
)


def keyed(live_key: str, body: str = "job") -> NewMessage:
    return message(body, deduplication_id=live_key)


async def send_one(
    store: QueueStore, clock: FakeClock, queue: QueueKey, sent: NewMessage
) -> SendResult:
    [result] = await store.send(queue, [sent], now=clock.now())
    return result


async def test_a_send_with_a_live_key_collapses_onto_the_live_message(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    first = keyed("k", "one")
    created = await send_one(store, clock, queue, first)
    again = await send_one(store, clock, queue, keyed("k", "two"))
    assert created == SendResult(first.id)
    assert again == SendResult(first.id, duplicate=True)
    assert [d.message.body for d in await receive(store, clock, queue)] == ["one"]


async def test_the_key_is_held_while_the_message_is_in_flight(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    first = keyed("k")
    await send_one(store, clock, queue, first)
    await receive_one(store, clock, queue)
    assert await send_one(store, clock, queue, keyed("k")) == SendResult(first.id, duplicate=True)


async def test_the_key_outlives_fifos_five_minute_window(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    first = keyed("k")
    await send_one(store, clock, queue, first)
    clock.advance(3_600)
    assert await send_one(store, clock, queue, keyed("k")) == SendResult(first.id, duplicate=True)


async def test_after_the_message_is_deleted_the_key_creates_a_new_message(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await send_one(store, clock, queue, keyed("k", "one"))
    await delete(store, clock, queue, (await receive_one(store, clock, queue)).receipt)
    second = keyed("k", "two")
    assert await send_one(store, clock, queue, second) == SendResult(second.id)
    assert [d.message.body for d in await receive(store, clock, queue)] == ["two"]


async def test_after_a_purge_the_key_creates_a_new_message(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await send_one(store, clock, queue, keyed("k"))
    await store.purge(queue, now=clock.now())
    second = keyed("k")
    assert await send_one(store, clock, queue, second) == SendResult(second.id)


async def test_an_expired_message_gives_its_key_up_before_the_sweeper_comes(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock, message_retention_period=60.0)
    await send_one(store, clock, queue, keyed("k", "old"))
    clock.advance(60)
    second = keyed("k", "new")
    assert await send_one(store, clock, queue, second) == SendResult(second.id)
    assert [d.message.body for d in await receive(store, clock, queue)] == ["new"]


async def test_a_dead_lettered_message_frees_its_key_and_holds_none_in_the_dead_letter_queue(
    store: QueueStore, clock: FakeClock
) -> None:
    source, target = await make_dead_letter_pair(store, clock, max_receive_count=1)
    poison = keyed("k", "poison")
    await send_one(store, clock, source, poison)
    await receive_one(store, clock, source, lease=1)
    clock.advance(1)
    assert await receive(store, clock, source) == []  # moved to the dead-letter queue
    again = keyed("k", "retry")
    assert await send_one(store, clock, source, again) == SendResult(again.id)
    # A second dead-lettered holder of the key is no conflict in the dead-letter queue.
    await receive_one(store, clock, source, lease=1)
    clock.advance(1)
    assert await receive(store, clock, source) == []
    dead = await receive(store, clock, target)
    assert sorted(d.message.body for d in dead) == ["poison", "retry"]


async def test_a_message_moved_back_from_the_dead_letter_queue_holds_no_key(
    store: QueueStore, clock: FakeClock
) -> None:
    source, _ = await make_dead_letter_pair(store, clock, max_receive_count=1)
    await send_one(store, clock, source, keyed("k", "poison"))
    await receive_one(store, clock, source, lease=1)
    clock.advance(1)
    await receive(store, clock, source)
    holder = keyed("k", "holder")
    await send_one(store, clock, source, holder)
    assert await store.move_messages(key("dlq"), None, limit=10, now=clock.now()) == 1
    assert await send_one(store, clock, source, keyed("k")) == SendResult(holder.id, duplicate=True)


async def test_repeats_of_a_key_in_one_batch_collapse_onto_the_first(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    batch = [keyed("k", "one"), keyed("other"), keyed("k", "two")]
    results = await store.send(queue, batch, now=clock.now())
    assert results == [
        SendResult(batch[0].id),
        SendResult(batch[1].id),
        SendResult(batch[0].id, duplicate=True),
    ]
    assert sorted(d.message.body for d in await receive(store, clock, queue)) == ["job", "one"]


async def test_keys_are_scoped_to_their_queue(store: QueueStore, clock: FakeClock) -> None:
    first = await make_queue(store, clock, "first")
    second = await make_queue(store, clock, "second")
    await send_one(store, clock, first, keyed("k"))
    other = keyed("k")
    assert await send_one(store, clock, second, other) == SendResult(other.id)


async def test_sends_without_a_key_are_never_collapsed(store: QueueStore, clock: FakeClock) -> None:
    queue = await make_queue(store, clock)
    results = await store.send(queue, [message("same"), message("same")], now=clock.now())
    assert not any(result.duplicate for result in results)
    assert len(await receive(store, clock, queue)) == 2


async def test_a_received_message_shows_its_key(store: QueueStore, clock: FakeClock) -> None:
    queue = await make_queue(store, clock)
    await send_one(store, clock, queue, keyed("k"))
    assert (await receive_one(store, clock, queue)).message.deduplication_id == "k"


async def test_the_service_accepts_a_deduplication_id_on_a_standard_queue(
    service: QueueService,
) -> None:
    queue = key("q")
    await service.create_queue(queue, {}, {})
    created = await service.send(queue, MessageDraft("one", deduplication_id="k"))
    again = await service.send(queue, MessageDraft("two", deduplication_id="k"))
    batch = await service.send_batch(queue, [MessageDraft("three", deduplication_id="k")])
    assert not created.duplicate
    assert again == SendResult(created.message_id, duplicate=True)
    assert batch == [SendResult(created.message_id, duplicate=True)]


async def test_the_service_checks_the_key_as_a_deduplication_id(service: QueueService) -> None:
    queue = key("q")
    await service.create_queue(queue, {}, {})
    with pytest.raises(InvalidParameter) as caught:
        await service.send(queue, MessageDraft("x", deduplication_id="a" * 129))
    assert caught.value.parameter == "MessageDeduplicationId"
