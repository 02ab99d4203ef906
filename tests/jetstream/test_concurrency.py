"""Several JetStream stores over one prefix, as several hopper processes would be:
every decision stays atomic across them (compare-and-set on the ledger's revision).

JetStream-only: the memory store has one process by construction, and Postgres has its
own races file (tests/postgres/test_concurrency.py) for its own statements.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

from hopper.core.clock import FakeClock
from hopper.core.model import NewMessage, QueueConfig, QueueKey
from hopper.store.jetstream import JetStreamQueueStore

from .servers import one_node
from .stores import drop_prefix

PROCESSES = 4
KEY = QueueKey("000000000000", "shared")


@asynccontextmanager
async def processes(count: int) -> AsyncIterator[list[JetStreamQueueStore]]:
    """`count` started stores on one fresh prefix (one JetStream connection each)."""
    prefix = f"t{uuid.uuid4().hex[:12]}"
    async with AsyncExitStack() as stack:
        stores = []
        for _ in range(count):
            store = JetStreamQueueStore([one_node().url], prefix=prefix, clock=FakeClock())
            await store.start(lambda key, n: None)
            stack.push_async_callback(store.close)
            stores.append(store)
        yield stores
    await drop_prefix(one_node().url, prefix)


def message(body: str, group: str | None = None) -> NewMessage:
    dedup = str(uuid.uuid4()) if group is not None else None
    return NewMessage(id=str(uuid.uuid4()), body=body, group_id=group, deduplication_id=dedup)


async def test_receives_racing_from_several_processes_never_claim_a_message_twice() -> None:
    clock = FakeClock()
    async with processes(PROCESSES) as stores:
        await stores[0].create_queue(KEY, QueueConfig(), {}, now=clock.now())
        for start in range(0, 100, 10):
            batch = [message(f"m{n}") for n in range(start, start + 10)]
            await stores[start // 10 % PROCESSES].send(KEY, batch, now=clock.now())

        async def drain(store: JetStreamQueueStore) -> list[str]:
            taken: list[str] = []
            while batch := await store.receive(
                KEY, max_messages=3, visibility_timeout=300, now=clock.now()
            ):
                taken.extend(d.message.id for d in batch)
            return taken

        # Each process runs several receives at once, too (its group commit).
        takers = [drain(store) for store in stores for _ in range(3)]
        taken = [mid for ids in await asyncio.gather(*takers) for mid in ids]

    twice = [mid for mid, n in Counter(taken).items() if n > 1]
    assert not twice, f"claimed twice: {twice}"
    assert len(taken) == 100


async def test_a_fifo_group_is_held_by_one_receiver_across_processes() -> None:
    clock = FakeClock()
    key = QueueKey("000000000000", "shared.fifo")
    async with processes(PROCESSES) as stores:
        await stores[0].create_queue(key, QueueConfig(fifo=True), {}, now=clock.now())
        groups = [f"g{n}" for n in range(5)]
        for n in range(4):
            await stores[n % PROCESSES].send(
                key, [message(f"{g}-{n}", g) for g in groups], now=clock.now()
            )

        async def one_receive(store: JetStreamQueueStore) -> list[tuple[str | None, str]]:
            batch = await store.receive(
                key, max_messages=10, visibility_timeout=300, now=clock.now()
            )
            return [(d.message.group_id, d.message.body) for d in batch]

        answers = await asyncio.gather(*(one_receive(s) for s in stores for _ in range(3)))

    # Every group was taken by exactly one receive, from its head and in order (a
    # receive of 10 may end inside a group's run; the rest of that group then waits
    # behind the messages in flight).
    holders: dict[str | None, int] = {}
    for index, answer in enumerate(answers):
        for group, _ in answer:
            assert holders.setdefault(group, index) == index, f"{group} held by two receives"
        for group in {g for g, _ in answer}:
            bodies = [body for g, body in answer if g == group]
            assert bodies == [f"{group}-{n}" for n in range(len(bodies))]
    assert set(holders) == set(groups)
