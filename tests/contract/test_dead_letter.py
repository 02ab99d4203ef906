"""Store contract: redrive to the dead-letter queue inside receive."""

from __future__ import annotations

from hopper.core.clock import FakeClock
from hopper.store.base import QueueStore

from .factories import attributes, fifo_message, make_dead_letter_pair, message, receive, send


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
    assert moved.receive_count == 1


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
