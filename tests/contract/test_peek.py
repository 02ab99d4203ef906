"""What operators read without touching a queue: `peek` (the dashboard's look at dead
messages), `accounts` (whose queues to list) and the dead-letter tally (a metrics
counter). A peek is never a delivery: receive counts, tokens and leases stay as they
were, so looking at a dead-letter queue cannot push a message further along."""

from __future__ import annotations

import pytest

from hopper.core.clock import FakeClock
from hopper.core.errors import QueueNotFound
from hopper.core.model import ReceiptOutcome
from hopper.core.store import QueueStore

from .factories import (
    attributes,
    config,
    delete,
    key,
    make_dead_letter_pair,
    make_queue,
    message,
    receive,
    receive_one,
    send,
)


async def test_peek_returns_messages_oldest_first_up_to_the_limit(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    for body in ("one", "two", "three"):
        await send(store, clock, queue, message(body))
        clock.advance(1)
    peeked = await store.peek(queue, limit=2, now=clock.now())
    assert [p.message.body for p in peeked] == ["one", "two"]


async def test_peek_shows_visible_in_flight_and_delayed_messages_as_they_are(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await send(store, clock, queue, message("leased"), message("waiting"))
    await send(store, clock, queue, message("delayed", delay=60.0))
    leased = await receive_one(store, clock, queue, lease=100)
    peeked = {p.message.body: p for p in await store.peek(queue, limit=10, now=clock.now())}
    assert set(peeked) == {"leased", "waiting", "delayed"}
    assert peeked["leased"].receive_count == 1
    assert peeked["leased"].visible_at == leased.visible_at
    assert peeked["leased"].first_received_at == clock.time()
    assert peeked["waiting"].receive_count == 0
    assert peeked["waiting"].first_received_at is None
    assert peeked["delayed"].visible_at == clock.time() + 60


async def test_peek_changes_no_receive_count_token_or_visibility(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await send(store, clock, queue, message("held"), message("free"))
    held = await receive_one(store, clock, queue, lease=100)
    before = await store.stats(queue, now=clock.now())
    for _ in range(3):
        await store.peek(queue, limit=10, now=clock.now())
    assert await store.stats(queue, now=clock.now()) == before
    # The peeked visible message is delivered for the first time, the held one's
    # receipt is still the current one.
    [free] = await receive(store, clock, queue, lease=100)
    assert (free.message.body, free.receive_count) == ("free", 1)
    assert (await delete(store, clock, queue, held.receipt)).outcome is ReceiptOutcome.OK


async def test_peek_at_a_dead_letter_queue_shows_where_messages_came_from(
    store: QueueStore, clock: FakeClock
) -> None:
    source, target = await make_dead_letter_pair(store, clock, max_receive_count=1)
    await send(store, clock, source, message("poison", attributes=attributes()))
    await receive_one(store, clock, source, lease=0)
    assert await receive(store, clock, source) == []  # the second receive moved it
    [dead] = await store.peek(target, limit=10, now=clock.now())
    assert dead.message.body == "poison"
    assert dead.message.dead_letter_source == source
    assert dead.message.attributes == attributes()
    assert dead.receive_count == 1  # carried over: the move is no receive


async def test_peek_leaves_out_messages_past_retention(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock, message_retention_period=60.0)
    await send(store, clock, queue, message("old"))
    clock.advance(30)
    await send(store, clock, queue, message("young"))
    clock.advance(30)
    assert [p.message.body for p in await store.peek(queue, limit=10, now=clock.now())] == [
        "young"
    ]


async def test_peek_at_an_empty_queue_is_empty(store: QueueStore, clock: FakeClock) -> None:
    queue = await make_queue(store, clock)
    assert await store.peek(queue, limit=10, now=clock.now()) == []


async def test_peek_at_a_missing_queue_raises_queue_not_found(
    store: QueueStore, clock: FakeClock
) -> None:
    with pytest.raises(QueueNotFound):
        await store.peek(key("missing"), limit=10, now=clock.now())


async def test_accounts_are_those_owning_a_queue_in_byte_order(
    store: QueueStore, clock: FakeClock
) -> None:
    assert await store.accounts() == []
    for account in ("222222222222", "111111111111", "222222222222"):
        await store.create_queue(
            key(f"q{len(account)}-{account[0]}", account), config(), {}, now=clock.now()
        )
    assert await store.accounts() == ["111111111111", "222222222222"]


async def test_the_dead_letter_tally_counts_each_move_once_per_source(
    store: QueueStore, clock: FakeClock
) -> None:
    source, _ = await make_dead_letter_pair(store, clock, max_receive_count=1)
    assert store.dead_lettered().get(source, 0) == 0
    await send(store, clock, source, message("a"), message("b"), message("c"))
    await receive(store, clock, source, lease=0)
    assert await receive(store, clock, source, lease=0) == []
    assert store.dead_lettered()[source] == 3
