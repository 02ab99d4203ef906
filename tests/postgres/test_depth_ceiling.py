"""The depth ceiling under real concurrency. The memory store is exact by construction
(one loop); on Postgres the check is in the send statement without a lock, so
concurrent sends can pass the ceiling by what they add together, and no more. What
that bound is can only be seen here, with many connections at once."""

from __future__ import annotations

import asyncio
import uuid

from hopper.core.model import NewMessage, QueueConfig, QueueKey
from hopper.store.postgres import PostgresQueueStore

from .conftest import StoreOpener

ACCOUNT = "000000000000"
SENDERS = 12
CEILING = 40


async def send_until_refused(store: PostgresQueueStore, queue: QueueKey) -> int:
    """One sender: single sends until one is refused; returns how many went in."""
    sent = 0
    while True:
        [result] = await store.send(
            queue, [NewMessage(id=str(uuid.uuid4()), body="x")], now=None, max_depth=CEILING
        )
        if result.refused:
            return sent
        sent += 1


async def test_concurrent_senders_pass_the_ceiling_by_at_most_one_send_each(
    open_store: StoreOpener,
) -> None:
    queue = QueueKey(ACCOUNT, "q")
    async with open_store(min_size=SENDERS, max_size=SENDERS, listen=False) as store:
        await store.create_queue(queue, QueueConfig(maximum_depth=CEILING), {}, now=None)
        counts = await asyncio.gather(*(send_until_refused(store, queue) for _ in range(SENDERS)))
        stats = await store.stats(queue, now=None)
        late = NewMessage(id="late", body="x")
        [after] = await store.send(queue, [late], now=None, max_depth=CEILING)

    assert stats.visible == sum(counts)
    # Every sender was refused in the end, and the overshoot is bounded by the sends
    # that ran at the same moment as the one that reached the ceiling.
    assert CEILING <= stats.visible <= CEILING + SENDERS - 1
    assert after.refused
    # Several senders really did take part (the test is about concurrency).
    assert sum(1 for count in counts if count) > 1
