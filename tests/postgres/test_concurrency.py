"""Real concurrency: many receivers over many pool connections at once. The memory
store is atomic by construction (one loop, no awaits mid-operation); here the
database's locking is what keeps the promises, so it is tested here."""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable

from hopper.core.errors import QueueNotFound
from hopper.core.model import (
    DeadLetterRule,
    Delivery,
    MessageAttribute,
    NewMessage,
    QueueConfig,
    QueueKey,
)
from hopper.store.postgres import PostgresQueueStore

from .conftest import StoreOpener

ACCOUNT = "000000000000"
RECEIVERS = 12


async def drain(store: PostgresQueueStore, queue: QueueKey) -> list[list[Delivery]]:
    """One receiver: claim (never delete) until a claim comes back empty."""
    batches = []
    while batch := await store.receive(queue, max_messages=10, visibility_timeout=600, now=None):
        batches.append(batch)
    return batches


async def receives_at_once_then_dead_letters(
    store: PostgresQueueStore, queue: QueueKey, dlq: QueueKey
) -> tuple[list[list[Delivery]], list[Delivery]]:
    """RECEIVERS receives of `queue` at once (at 2000.0, leases of 600 s), then what its
    dead-letter queue `dlq` holds: the deliveries of each receive, and those moved."""
    got = await asyncio.gather(
        *(
            store.receive(queue, max_messages=10, visibility_timeout=600, now=2000.0)
            for _ in range(RECEIVERS)
        )
    )
    moved: list[Delivery] = []
    while batch := await store.receive(dlq, max_messages=10, visibility_timeout=600, now=2000.0):
        moved.extend(batch)
    return list(got), moved


async def test_concurrent_receivers_never_claim_a_message_twice(open_store: StoreOpener) -> None:
    queue = QueueKey(ACCOUNT, "q")
    async with open_store(min_size=RECEIVERS, max_size=RECEIVERS, listen=False) as store:
        await store.create_queue(queue, QueueConfig(), {}, now=None)
        sent = [str(uuid.uuid4()) for _ in range(1_000)]
        for start in range(0, len(sent), 10):
            batch = [NewMessage(id=i, body=i) for i in sent[start : start + 10]]
            await store.send(queue, batch, now=None)

        receivers = await asyncio.gather(*(drain(store, queue) for _ in range(RECEIVERS)))

    claimed = Counter(d.message.id for batches in receivers for b in batches for d in b)
    assert set(claimed) == set(sent)
    assert max(claimed.values()) == 1
    assert all(len(b) <= 10 for batches in receivers for b in batches)
    # Several receivers really did take part (the test is about concurrency).
    assert sum(1 for batches in receivers if batches) > 1


async def test_receives_sharing_a_claim_look_again_for_the_places_poison_took(
    open_store: StoreOpener,
) -> None:
    # Concurrent receives of one queue share a claim statement; when the claim moves
    # poison messages to the dead-letter queue instead of delivering them, the receives
    # left short look again on their own, so none comes back with less than it could.
    queue, dlq = QueueKey(ACCOUNT, "q"), QueueKey(ACCOUNT, "dlq")
    async with open_store(min_size=RECEIVERS, max_size=RECEIVERS, listen=False) as store:
        await store.create_queue(dlq, QueueConfig(), {}, now=None)
        await store.create_queue(
            queue, QueueConfig(dead_letter=DeadLetterRule(dlq, 1)), {}, now=None
        )
        poison = [f"poison-{i}" for i in range(40)]
        await store.send(queue, [NewMessage(id=i, body=i) for i in poison], now=1000.0)
        for _ in range(4):  # each received once, its lease over by the time below
            assert len(await store.receive(queue, max_messages=10, visibility_timeout=30,
                                           now=1000.0)) == 10
        good = [f"good-{i}" for i in range(RECEIVERS * 10)]
        await store.send(queue, [NewMessage(id=i, body=i) for i in good], now=1000.0)

        got, moved = await receives_at_once_then_dead_letters(store, queue, dlq)

    delivered = [d.message.id for batch in got for d in batch]
    assert sorted(delivered) == sorted(good)
    assert all(len(batch) == 10 for batch in got)
    assert sorted(d.message.id for d in moved) == sorted(poison)


async def test_fifo_receives_sharing_a_turn_look_again_for_the_places_poison_took(
    open_store: StoreOpener,
) -> None:
    # Concurrent FIFO receives of one queue share a turn, their claims sent together in
    # one round trip; a claim that moves a poison group to the dead-letter queue instead
    # of delivering it looks again inside the turn, so every receive still gets a whole
    # group of good messages, and no group goes to two receives.
    queue, dlq = QueueKey(ACCOUNT, "q.fifo"), QueueKey(ACCOUNT, "dlq.fifo")

    def group_of(name: str) -> list[NewMessage]:
        return [
            NewMessage(id=f"{name}-{n}", body=name, group_id=name,
                       deduplication_id=f"{name}-{n}")
            for n in range(10)
        ]

    async with open_store(min_size=RECEIVERS, max_size=RECEIVERS, listen=False) as store:
        await store.create_queue(dlq, QueueConfig(fifo=True), {}, now=None)
        await store.create_queue(
            queue, QueueConfig(fifo=True, dead_letter=DeadLetterRule(dlq, 1)), {}, now=None
        )
        poison = [f"poison{i}" for i in range(4)]
        await store.send(queue, [m for p in poison for m in group_of(p)], now=900.0)
        for _ in poison:  # each group received once, available again from 930 on
            assert len(await store.receive(queue, max_messages=10, visibility_timeout=30,
                                           now=900.0)) == 10
        good = [f"good{i}" for i in range(RECEIVERS)]
        await store.send(queue, [m for g in good for m in group_of(g)], now=1000.0)

        got, moved = await receives_at_once_then_dead_letters(store, queue, dlq)

    assert all(len(batch) == 10 and len({d.message.body for d in batch}) == 1 for batch in got)
    assert sorted(batch[0].message.body for batch in got) == sorted(good)
    assert sorted(d.message.id for d in moved) == sorted(m.id for p in poison for m in group_of(p))


async def test_concurrent_fifo_receivers_never_hold_one_group_twice(
    open_store: StoreOpener,
) -> None:
    queue = QueueKey(ACCOUNT, "q.fifo")
    groups = [f"g{n}" for n in range(30)]
    async with open_store(min_size=RECEIVERS, max_size=RECEIVERS, listen=False) as store:
        await store.create_queue(queue, QueueConfig(fifo=True), {}, now=None)
        for round_ in range(5):
            sends = [
                NewMessage(
                    id=f"{g}-{round_}", body="x", group_id=g, deduplication_id=f"{g}-{round_}"
                )
                for g in groups
            ]
            await store.send(queue, sends, now=None)

        receivers = await asyncio.gather(*(drain(store, queue) for _ in range(RECEIVERS)))

    # No deletes, so a group's first lease locks it: exactly one claim holds each group,
    # and it holds a prefix of the group in send order.
    holders: defaultdict[str, set[tuple[int, int]]] = defaultdict(set)
    held: defaultdict[str, list[str]] = defaultdict(list)
    for r, batches in enumerate(receivers):
        for b, batch in enumerate(batches):
            for delivery in batch:
                group = delivery.message.group_id
                assert group is not None
                holders[group].add((r, b))
                held[group].append(delivery.message.id)
    assert set(holders) == set(groups)
    assert all(len(claims) == 1 for claims in holders.values())
    for group, ids in held.items():
        assert ids == [f"{group}-{n}" for n in range(len(ids))]


async def test_concurrent_sends_of_one_live_key_create_one_message(
    open_store: StoreOpener,
) -> None:
    queue = QueueKey(ACCOUNT, "q")
    senders = 24
    async with open_store(min_size=RECEIVERS, max_size=RECEIVERS, listen=False) as store:
        await store.create_queue(queue, QueueConfig(), {}, now=None)
        for round_ in range(5):
            key = f"job-{round_}"
            results = await asyncio.gather(
                *(
                    store.send(
                        queue,
                        [NewMessage(id=str(uuid.uuid4()), body=key, deduplication_id=key)],
                        now=None,
                    )
                    for _ in range(senders)
                )
            )
            # Every sender names the one message; exactly one of them created it.
            answers = [result for batch in results for result in batch]
            assert len({r.message_id for r in answers}) == 1
            assert sum(1 for r in answers if not r.duplicate) == 1
        stats = await store.stats(queue, now=None)
    assert stats.visible == 5


async def test_concurrent_sends_to_many_queues_each_land_in_their_own_queue(
    open_store: StoreOpener,
) -> None:
    # Plain sends of different queues share statements (store/sends.send_plain_across):
    # each message must still land in its own queue, and a send to a queue that does
    # not exist must fail alone, not the sends that shared its statement.
    queues = [QueueKey(ACCOUNT, f"q{number}") for number in range(20)]
    missing = QueueKey(ACCOUNT, "missing")
    async with open_store(listen=False) as store:
        await sent_at_once(
            store, queues, missing, 5,
            lambda queue, number: NewMessage(
                id=f"{queue.name}-{number}", body=f"{queue.name}-{number}"),
        )
        for queue in queues:
            bodies = {d.message.body for d in await drain_all(store, queue)}
            assert bodies == {f"{queue.name}-{number}" for number in range(5)}


async def test_concurrent_plain_sends_keep_what_each_message_carries(
    open_store: StoreOpener,
) -> None:
    # Shared plain sends go by one of two statements: ids and bodies alone, joined by
    # U+001F (send_plain_bare), where no message of the statement carries more and no
    # body holds that character, JSON otherwise. Each message keeps what it carried,
    # or its absence, whichever statement it shared, and a send to a queue that does
    # not exist fails alone in either. (The store takes a body SQS would refuse.)
    queues = [QueueKey(ACCOUNT, f"q{number}") for number in range(4)]
    missing = QueueKey(ACCOUNT, "missing")
    attribute = {"color": MessageAttribute("String", string_value="blue")}

    def message(queue: QueueKey, number: int) -> NewMessage:
        name = f"{queue.name}-{number}"
        if number % 3 == 0:
            return NewMessage(id=name, body=name, attributes=attribute, trace_header=name)
        if number % 3 == 1:
            return NewMessage(id=name, body=f"{name}\x1fmore")
        return NewMessage(id=name, body=name)

    async with open_store(listen=False) as store:
        await sent_at_once(store, queues, missing, 6, message)
        for queue in queues:
            got = {d.message.id: d.message for d in await drain_all(store, queue)}
            assert set(got) == {f"{queue.name}-{number}" for number in range(6)}
            for number in range(6):
                sent = message(queue, number)
                stored = got[sent.id]
                assert (stored.body, stored.attributes, stored.trace_header) == (
                    sent.body,
                    sent.attributes,
                    sent.trace_header,
                )


async def sent_at_once(
    store: PostgresQueueStore,
    queues: list[QueueKey],
    missing: QueueKey,
    count: int,
    message: Callable[[QueueKey, int], NewMessage],
) -> None:
    """Create `queues`, then send `count` messages `message(queue, number)` to each of
    them and to `missing` (which does not exist), all at once, one message a send: each
    send to a queue answers its message's id, each to `missing` fails alone."""
    for queue in queues:
        await store.create_queue(queue, QueueConfig(), {}, now=None)

    async def send(queue: QueueKey, number: int) -> str | Exception:
        try:
            [result] = await store.send(queue, [message(queue, number)], now=None)
        except QueueNotFound as error:
            return error
        return result.message_id

    sends = [(queue, number) for number in range(count) for queue in [*queues, missing]]
    answers = await asyncio.gather(*(send(queue, number) for queue, number in sends))
    for (queue, number), answer in zip(sends, answers, strict=True):
        if queue == missing:
            assert isinstance(answer, QueueNotFound)
        else:
            assert answer == f"{queue.name}-{number}"


async def drain_all(store: PostgresQueueStore, queue: QueueKey) -> list[Delivery]:
    return [d for batch in await drain(store, queue) for d in batch]


async def test_concurrent_look_ups_of_many_queues_each_find_their_own(
    open_store: StoreOpener,
) -> None:
    # Look-ups of different queues share statements (PostgresQueueStore.get_queue).
    queues = [QueueKey(ACCOUNT, f"q{number}") for number in range(20)]
    async with open_store(listen=False) as store:
        for number, queue in enumerate(queues):
            await store.create_queue(queue, QueueConfig(delay_seconds=number), {}, now=None)
        asked = [*queues, QueueKey(ACCOUNT, "missing"), *queues]
        found = await asyncio.gather(*(store.get_queue(queue) for queue in asked))
    for queue, record in zip(asked, found, strict=True):
        if queue.name == "missing":
            assert record is None
        else:
            assert record is not None
            assert (record.key, record.config.delay_seconds) == (queue, int(queue.name[1:]))
