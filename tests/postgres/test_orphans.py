"""Messages and FIFO deduplication ids have no foreign key to their queue (migrations
0070, 0090): DeleteQueue deletes the queue's messages and ids itself, and a send that
read the queue before the delete and commits after it leaves rows no statement can
reach, which housekeeping removes."""

from __future__ import annotations

import json

import asyncpg

from hopper.core.model import NewMessage, QueueConfig, QueueKey
from hopper.store.postgres.schema import queries

from .conftest import StoreOpener
from .databases import SCHEMA

ACCOUNT = "000000000000"


async def rows_under(connection: asyncpg.Connection, queue_id: int) -> int:
    count: int = await connection.fetchval(
        "SELECT count(*) FROM messages WHERE queue_id = $1", queue_id
    )
    return count


async def test_delete_queue_deletes_its_messages(open_store: StoreOpener, database: str) -> None:
    queue = QueueKey(ACCOUNT, "doomed")
    connection = await asyncpg.connect(database, server_settings={"search_path": SCHEMA})
    try:
        async with open_store(listen=False) as store:
            await store.create_queue(queue, QueueConfig(), {}, now=None)
            queue_id = await connection.fetchval("SELECT id FROM queues WHERE name = 'doomed'")
            await store.send(queue, [NewMessage(id=f"m{i}", body="x") for i in range(5)], now=None)
            assert await rows_under(connection, queue_id) == 5
            await store.delete_queue(queue, now=None)
            assert await rows_under(connection, queue_id) == 0
    finally:
        await connection.close()


async def test_a_send_committed_after_delete_queue_is_swept_by_housekeeping(
    open_store: StoreOpener, database: str
) -> None:
    queue = QueueKey(ACCOUNT, "raced")
    survivor = QueueKey(ACCOUNT, "survivor")
    sender = await asyncpg.connect(database, server_settings={"search_path": SCHEMA})
    try:
        async with open_store(listen=False) as store:
            await store.create_queue(queue, QueueConfig(), {}, now=None)
            await store.create_queue(survivor, QueueConfig(), {}, now=None)
            await store.send(survivor, [NewMessage(id="kept", body="x")], now=None)
            queue_id = await sender.fetchval("SELECT id FROM queues WHERE name = 'raced'")
            # The store's own send statement, in a transaction held open across the delete.
            transaction = sender.transaction()
            await transaction.start()
            message = {"i": "late", "b": "x", "a": [], "h": None, "d": 0.0, "g": None}
            sent = await sender.fetch(
                queries()["send_plain_messages"], ACCOUNT, "raced", None, json.dumps([message])
            )
            assert len(sent) == 1
            # Nothing locks the queue row any more: the delete does not wait for the send.
            await store.delete_queue(queue, now=None)
            await transaction.commit()
            assert await rows_under(sender, queue_id) == 1

            await store.sweep_expired(limit=100, now=None)

            assert await rows_under(sender, queue_id) == 0
            assert [m.message.id for m in await store.receive(
                survivor, max_messages=10, visibility_timeout=30, now=None
            )] == ["kept"]
    finally:
        await sender.close()


async def windows_under(connection: asyncpg.Connection, queue_id: int) -> list[str]:
    """The deduplication ids kept under a queue id."""
    rows = await connection.fetch(
        "SELECT dedup_id FROM fifo_dedup WHERE queue_id = $1 ORDER BY dedup_id", queue_id
    )
    return [row["dedup_id"] for row in rows]


async def test_a_fifo_send_committed_after_delete_queue_is_swept_by_housekeeping(
    open_store: StoreOpener, database: str
) -> None:
    queue = QueueKey(ACCOUNT, "raced.fifo")
    sender = await asyncpg.connect(database, server_settings={"search_path": SCHEMA})
    try:
        async with open_store(listen=False) as store:
            await store.create_queue(queue, QueueConfig(fifo=True), {}, now=None)
            queue_id = await sender.fetchval("SELECT id FROM queues WHERE name = 'raced.fifo'")
            first = NewMessage(id="first", body="x", group_id="g", deduplication_id="1")
            await store.send(queue, [first], now=None)
            # The store's own send statement, in a transaction held open across the delete.
            transaction = sender.transaction()
            await transaction.start()
            message = {"i": "late", "b": "x", "a": {}, "h": None, "d": 0.0, "g": "g",
                       "k": "2", "w": "2"}
            sent = await sender.fetch(
                queries()["send_fifo_messages"], ACCOUNT, queue.name, None,
                json.dumps([message]), 300.0,
            )
            assert [row["duplicate"] for row in sent] == [False]
            # Nothing locks the queue row: the delete does not wait for the send, and
            # takes the queue's deduplication ids with its messages.
            await store.delete_queue(queue, now=None)
            await transaction.commit()
            assert await windows_under(sender, queue_id) == ["2"]

            await store.sweep_expired(limit=100, now=None)

            assert await windows_under(sender, queue_id) == []
            assert await rows_under(sender, queue_id) == 0
    finally:
        await sender.close()
