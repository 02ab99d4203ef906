"""Messages that arrive in a FIFO queue other than by a send -- dead-lettered by a claim,
moved by a move task -- take the queue's send turn as its sends do (fragment
fifo_send_turn in queries.sql), so that they commit in the order of the places they draw.
A send holding the turn here is a caller's transaction (hopper.enqueue) left open: the
arrival waits for its commit, and a receive never finds the arrival before the message
sent ahead of it."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg
import pytest

from hopper import enqueue
from hopper.core.model import DeadLetterRule, Delivery, NewMessage, QueueConfig, QueueKey
from hopper.store.postgres import PostgresQueueStore

from .conftest import StoreOpener

ACCOUNT = "000000000000"
ORDERS = QueueKey(ACCOUNT, "orders.fifo")
DEAD = QueueKey(ACCOUNT, "dead.fifo")

# Advisory locks of the test's own database that its backends wait for.
ADVISORY_WAITS = """
    SELECT count(*) FROM pg_locks
    WHERE locktype = 'advisory' AND NOT granted
      AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
"""


def message(body: str) -> NewMessage:
    """A message of the group its body names ("g/1": group g)."""
    group = body.split("/")[0]
    return NewMessage(id=str(uuid.uuid4()), body=body, group_id=group, deduplication_id=body)


def bodies(deliveries: list[Delivery]) -> list[str]:
    return [d.message.body for d in deliveries]


async def fifo_queues(store: PostgresQueueStore) -> None:
    """orders.fifo, dead-lettering into dead.fifo after one receive."""
    await store.create_queue(DEAD, QueueConfig(fifo=True), {}, now=None)
    config = QueueConfig(fifo=True, dead_letter=DeadLetterRule(DEAD, 1))
    await store.create_queue(ORDERS, config, {}, now=None)


async def queues_with_g1_received_once(store: PostgresQueueStore) -> None:
    """fifo_queues, orders.fifo holding g/1 of group g received once (a lease of 0:
    receivable again, and poison)."""
    await fifo_queues(store)
    await store.send(ORDERS, [message("g/1")], now=None)
    got = await store.receive(ORDERS, max_messages=10, visibility_timeout=0, now=None)
    assert bodies(got) == ["g/1"]


@asynccontextmanager
async def send_uncommitted(
    database: str, queue: QueueKey, body: str
) -> AsyncIterator[asyncpg.Connection]:
    """A caller's transaction that sent `body` (group g) to the FIFO `queue` through
    hopper.enqueue and is left open: it holds the queue's send turn until the caller
    commits the connection's transaction (or the block ends, rolling it back)."""
    connection = await asyncpg.connect(database)
    try:
        await connection.execute("BEGIN")
        await enqueue.send(connection, queue.name, body, group_id="g", deduplication_id=body)
        yield connection
    finally:
        await connection.close()


async def waits_for_a_lock(database: str, task: asyncio.Task[object]) -> bool:
    """Whether some backend of the database waits for an advisory lock before `task`
    is done (True as soon as one does)."""
    monitor = await asyncpg.connect(database)
    try:
        async with asyncio.timeout(10):
            while not await monitor.fetchval(ADVISORY_WAITS):
                if task.done():
                    return False
                await asyncio.sleep(0.002)
        return True
    finally:
        await monitor.close()


async def test_a_dead_letter_into_a_fifo_queue_waits_for_a_send_there_to_commit(
    open_store: StoreOpener, database: str
) -> None:
    # g/2 is sent to dead.fifo in a transaction not yet committed, then the receive of
    # orders.fifo dead-letters g/1 there: it draws its place after g/2's, so it commits
    # after it. Committed first, it was a receivable head of group g at dead.fifo while
    # g/2, before it, was not yet there; a receive took it, and g/2, committed next,
    # became the head and was delivered with g/1 in flight.
    async with open_store(min_size=2, max_size=4, listen=False) as store:
        await queues_with_g1_received_once(store)
        async with send_uncommitted(database, DEAD, "g/2") as caller:
            claim = asyncio.create_task(
                store.receive(ORDERS, max_messages=10, visibility_timeout=600, now=None)
            )
            waited = await waits_for_a_lock(database, claim)
            early = await store.receive(DEAD, max_messages=10, visibility_timeout=600, now=None)
            await caller.execute("COMMIT")
            assert await claim == []
        late = await store.receive(DEAD, max_messages=10, visibility_timeout=600, now=None)
    assert (bodies(early), bodies(late)) == ([], ["g/2", "g/1"])
    assert waited


@pytest.mark.parametrize("named", [True, False], ids=["to-a-queue", "back-to-the-source"])
async def test_a_move_into_a_fifo_queue_waits_for_a_send_there_to_commit(
    open_store: StoreOpener, database: str, named: bool
) -> None:
    # g/1, dead-lettered into dead.fifo, moves back to orders.fifo (named, or as its
    # dead-letter source) while g/2 is sent there in a transaction not yet committed:
    # as the dead-letter above, the move commits after the send.
    async with open_store(min_size=2, max_size=4, listen=False) as store:
        await queues_with_g1_received_once(store)
        assert await store.receive(ORDERS, max_messages=10, visibility_timeout=600, now=None) == []
        async with send_uncommitted(database, ORDERS, "g/2") as caller:
            move = asyncio.create_task(
                store.move_messages(DEAD, ORDERS if named else None, limit=10, now=None)
            )
            waited = await waits_for_a_lock(database, move)
            early = await store.receive(ORDERS, max_messages=10, visibility_timeout=600, now=None)
            await caller.execute("COMMIT")
            assert await move == 1
        late = await store.receive(ORDERS, max_messages=10, visibility_timeout=600, now=None)
    assert (bodies(early), bodies(late)) == ([], ["g/2", "g/1"])
    assert waited


async def test_a_claim_that_dead_letters_nothing_takes_no_send_turn(
    open_store: StoreOpener, database: str
) -> None:
    # Only a claim that moves a message into the FIFO dead-letter queue waits for its
    # send turn: one that delivers, while a send there is uncommitted, answers at once.
    async with open_store(min_size=2, max_size=4, listen=False) as store:
        await fifo_queues(store)
        await store.send(ORDERS, [message("h/1")], now=None)
        async with send_uncommitted(database, DEAD, "g/2"), asyncio.timeout(10):
            got = await store.receive(ORDERS, max_messages=1, visibility_timeout=600, now=None)
    assert bodies(got) == ["h/1"]
