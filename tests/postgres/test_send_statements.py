"""Concurrent sends, receives and deletes share statements (store/postgres/coalesce.py):
callers that call again straight after their answer go together in the next statement,
not in two halves taking turns. Counted by the transactions that last wrote the
messages (their xmin): one statement, one transaction; deletes by a trigger."""

from __future__ import annotations

import asyncio

import pytest

from hopper.core.model import NewMessage, QueueConfig, QueueKey
from hopper.store.postgres import PostgresQueueStore

from .conftest import StoreOpener

SENDERS = 16
ROUNDS = 8


async def sender(store: PostgresQueueStore, queue: QueueKey, number: int) -> None:
    for round_ in range(ROUNDS):
        key = f"{number}-{round_}"
        message = (
            NewMessage(id=key, body="x", group_id=str(number), deduplication_id=key)
            if queue.is_fifo
            else NewMessage(id=key, body="x")
        )
        await store.send(queue, [message], now=None)
        # its way back to the client and the client's next request: a few turns of the
        # loop, more for some senders than for others
        for _ in range(number % 4):
            await asyncio.sleep(0)


async def statements_of(store: PostgresQueueStore) -> int:
    count = await store._db.fetchval("SELECT count(DISTINCT xmin::text) FROM messages")
    assert isinstance(count, int)
    return count


@pytest.mark.parametrize("name", ["q", "q.fifo"])
async def test_senders_sending_back_to_back_share_each_round_s_statement(
    open_store: StoreOpener, name: str
) -> None:
    queue = QueueKey("000000000000", name)
    async with open_store(min_size=4, max_size=4, listen=False) as store:
        await store.create_queue(queue, QueueConfig(fifo=queue.is_fifo), {}, now=None)
        await asyncio.gather(*(sender(store, queue, n) for n in range(SENDERS)))
        statements = await statements_of(store)
    # one statement a round, and a few more where a sender came back late (two halves
    # taking turns take twice as many)
    assert statements <= ROUNDS * 1.5, statements


async def receiver(store: PostgresQueueStore, queue: QueueKey, number: int) -> None:
    for _ in range(ROUNDS):
        got = await store.receive(queue, max_messages=1, visibility_timeout=600, now=None)
        assert len(got) == 1
        for _ in range(number % 4):  # as a sender's, its way back
            await asyncio.sleep(0)


async def test_receivers_receiving_back_to_back_share_each_round_s_claim(
    open_store: StoreOpener,
) -> None:
    queue = QueueKey("000000000000", "q")
    async with open_store(min_size=4, max_size=4, listen=False) as store:
        await store.create_queue(queue, QueueConfig(), {}, now=None)
        messages = [NewMessage(id=str(n), body="x") for n in range(SENDERS * ROUNDS + 1)]
        for start in range(0, len(messages), 10):
            await store.send(queue, messages[start : start + 10], now=None)
        # the first receive alone: the store learns the queue's kind (receives share
        # claims from then on)
        first = await store.receive(queue, max_messages=1, visibility_timeout=600, now=None)
        assert len(first) == 1
        await asyncio.gather(*(receiver(store, queue, n) for n in range(SENDERS)))
        claims = await statements_of(store) - 1
    assert claims <= ROUNDS * 1.5, claims


async def deleter(store: PostgresQueueStore, queue: QueueKey, number: int) -> None:
    for _ in range(ROUNDS):
        got = await store.receive(queue, max_messages=1, visibility_timeout=600, now=None)
        for _ in range(number % 4):  # its way back to the client and its delete
            await asyncio.sleep(0)
        results = await store.delete(
            queue, [d.receipt for d in got], refuse_expired=False, now=None
        )
        assert len(results) == 1


# Deleted rows leave no xmin to count: a statement-level trigger counts the statements
# that deleted messages (a claim's housekeeping deletes too, mostly nothing).
COUNT_DELETES = """
CREATE TABLE delete_statements (deleted bigint);
CREATE FUNCTION count_delete_statement() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO delete_statements SELECT count(*) FROM gone HAVING count(*) > 0;
    RETURN NULL;
END $$;
CREATE TRIGGER count_delete_statements AFTER DELETE ON messages
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT
    EXECUTE FUNCTION count_delete_statement();
"""


async def test_the_deletes_of_a_claim_s_receivers_share_one_statement(
    open_store: StoreOpener,
) -> None:
    # Each round's first delete waits for the deletes of the others the same claim
    # answered, instead of going alone and leaving them a second statement.
    queue = QueueKey("000000000000", "q")
    async with open_store(min_size=4, max_size=4, listen=False) as store:
        await store.create_queue(queue, QueueConfig(), {}, now=None)
        await store._db.execute(COUNT_DELETES)
        messages = [NewMessage(id=str(n), body="x") for n in range(SENDERS * ROUNDS + 1)]
        for start in range(0, len(messages), 10):
            await store.send(queue, messages[start : start + 10], now=None)
        first = await store.receive(queue, max_messages=1, visibility_timeout=600, now=None)
        await store.delete(queue, [d.receipt for d in first], refuse_expired=False, now=None)
        await asyncio.gather(*(deleter(store, queue, n) for n in range(SENDERS)))
        sizes = [row[0] for row in await store._db.fetch("SELECT deleted FROM delete_statements")]
    assert sum(sizes) == SENDERS * ROUNDS + 1
    assert len(sizes) - 1 <= ROUNDS * 1.5, sizes
