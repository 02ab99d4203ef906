"""Store contract: queue records, listing, tags, deletion."""

from __future__ import annotations

import asyncio

import pytest

from hopper.core.clock import FakeClock
from hopper.core.errors import QueueNotFound
from hopper.core.model import DeadLetterRule, QueueKey
from hopper.core.store import QueueStore

from .factories import config, key, make_queue, message, receive, send


async def test_create_queue_returns_the_new_record_and_created(
    store: QueueStore, clock: FakeClock
) -> None:
    record, created = await store.create_queue(
        key("a"), config(visibility_timeout=5.0, extra={"Policy": "{}"}), {"team": "x"},
        now=clock.now(),
    )
    assert created
    assert record.key == key("a")
    assert record.config.visibility_timeout == 5.0
    assert record.config.extra == {"Policy": "{}"}
    assert record.tags == {"team": "x"}
    assert record.created_at == record.last_modified_at == clock.time()
    assert await store.get_queue(key("a")) == record


async def test_create_existing_queue_returns_existing_unchanged_and_not_created(
    store: QueueStore, clock: FakeClock
) -> None:
    first, _ = await store.create_queue(key("a"), config(), {}, now=clock.now())
    clock.advance(5)
    again, created = await store.create_queue(
        key("a"), config(visibility_timeout=99.0), {"t": "v"}, now=clock.now()
    )
    assert not created
    assert again == first
    assert await store.get_queue(key("a")) == first


async def test_get_queue_of_unknown_key_is_none(store: QueueStore) -> None:
    assert await store.get_queue(key("nope")) is None


async def test_queues_are_keyed_by_account_and_name(store: QueueStore, clock: FakeClock) -> None:
    await store.create_queue(QueueKey("111111111111", "q"), config(), {}, now=clock.now())
    assert await store.get_queue(QueueKey("222222222222", "q")) is None


async def test_list_queues_orders_by_name_filters_prefix_after_and_limit(
    store: QueueStore, clock: FakeClock
) -> None:
    for name in ["b2", "a1", "b1", "c1", "b3"]:
        await make_queue(store, clock, name)
    await store.create_queue(QueueKey("999999999999", "b0"), config(), {}, now=clock.now())

    def names(records: list) -> list[str]:  # type: ignore[type-arg]
        return [r.key.name for r in records]

    assert names(await store.list_queues(key().account)) == ["a1", "b1", "b2", "b3", "c1"]
    assert names(await store.list_queues(key().account, prefix="b")) == ["b1", "b2", "b3"]
    assert names(await store.list_queues(key().account, prefix="b", after="b1")) == ["b2", "b3"]
    assert names(await store.list_queues(key().account, limit=2)) == ["a1", "b1"]


async def test_update_queue_replaces_config_and_sets_last_modified(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    clock.advance(10)
    record = await store.update_queue(queue, config(delay_seconds=7.0), now=clock.now())
    assert record.config.delay_seconds == 7.0
    assert record.last_modified_at == clock.time()
    assert record.created_at == clock.time() - 10
    assert await store.get_queue(queue) == record


async def test_update_unknown_queue_raises_queue_not_found(
    store: QueueStore, clock: FakeClock
) -> None:
    with pytest.raises(QueueNotFound):
        await store.update_queue(key("nope"), config(), now=clock.now())


async def test_delete_queue_removes_it_with_its_messages_and_records_the_time(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await send(store, clock, queue, message("old"))
    clock.advance(3)
    assert await store.delete_queue(queue, now=clock.now()) == clock.time()
    assert await store.get_queue(queue) is None
    assert await store.last_deleted_at(queue) == clock.time()
    await make_queue(store, clock)
    assert await receive(store, clock, queue) == []


async def test_delete_unknown_queue_returns_none(store: QueueStore, clock: FakeClock) -> None:
    assert await store.delete_queue(key("nope"), now=clock.now()) is None
    assert await store.last_deleted_at(key("nope")) is None


async def test_set_tags_adds_overwrites_then_removes(store: QueueStore, clock: FakeClock) -> None:
    queue = key("q")
    await store.create_queue(queue, config(), {"a": "1", "b": "2"}, now=clock.now())
    record = await store.set_tags(queue, add={"b": "two", "c": "3"}, remove=["a", "missing"])
    assert record.tags == {"b": "two", "c": "3"}
    got = await store.get_queue(queue)
    assert got is not None and got.tags == {"b": "two", "c": "3"}


async def test_set_tags_on_unknown_queue_raises_queue_not_found(store: QueueStore) -> None:
    with pytest.raises(QueueNotFound):
        await store.set_tags(key("nope"), add={"a": "1"}, remove=[])


async def test_dead_letter_sources_are_the_queues_naming_the_target_by_name(
    store: QueueStore, clock: FakeClock
) -> None:
    target = await make_queue(store, clock, "dlq")
    other = await make_queue(store, clock, "other")
    for name in ["zeta", "alpha"]:
        await make_queue(store, clock, name, dead_letter=DeadLetterRule(target, 3))
    await make_queue(store, clock, "elsewhere", dead_letter=DeadLetterRule(other, 3))
    await make_queue(store, clock, "plain")
    assert await store.dead_letter_sources(target) == [key("alpha"), key("zeta")]


@pytest.mark.parametrize(
    "call",
    [
        lambda s, k, now: s.send(k, [message()], now=now),
        lambda s, k, now: s.receive(k, max_messages=1, visibility_timeout=1, now=now),
        lambda s, k, now: s.delete(k, [], refuse_expired=False, now=now),
        lambda s, k, now: s.change_visibility(k, [], refuse_expired=False, now=now),
        lambda s, k, now: s.purge(k, now=now),
        lambda s, k, now: s.last_purged_at(k),
        lambda s, k, now: s.stats(k, now=now),
        lambda s, k, now: s.next_visible_at(k, now=now),
    ],
    ids=[
        "send", "receive", "delete", "change_visibility", "purge", "last_purged_at", "stats",
        "next_visible_at",
    ],
)
async def test_message_methods_on_unknown_queue_raise_queue_not_found(
    store: QueueStore, clock: FakeClock, call: object
) -> None:
    with pytest.raises(QueueNotFound):
        await call(store, key("nope"), clock.now())  # type: ignore[operator]


async def test_list_queues_while_other_queues_change_lists_every_queue_made_before(
    store: QueueStore, clock: FakeClock
) -> None:
    # A listing that stops early under concurrent writes (the JetStream store once did:
    # nats.py's watch ends its replay too soon) hides queues from ListQueues and metrics.
    names = [f"q{n:03}" for n in range(120)]
    await asyncio.gather(*(make_queue(store, clock, name) for name in names))
    other = "999999999999"
    busy = True

    async def churn() -> None:
        n = 0
        while busy:
            await store.create_queue(QueueKey(other, f"w{n}"), config(), {}, now=clock.now())
            await store.set_tags(QueueKey(other, f"w{n}"), add={"n": str(n)}, remove=[])
            n += 1

    writer = asyncio.create_task(churn())
    try:
        for _ in range(15):
            listed = await store.list_queues(key("x").account)
            assert [r.key.name for r in listed] == names
    finally:
        busy = False
        await writer
