"""The plan of the stats statement that metrics and the dashboard count queues with:
it reads the rows of the queue asked about, through an index, never the whole
messages table (other queues' millions cost it nothing)."""

from __future__ import annotations

import json

import asyncpg

from hopper.core.model import NewMessage, QueueConfig, QueueKey
from hopper.store.schema import queries

from .conftest import StoreOpener
from .test_query_plan import ACCOUNT, scans


async def test_stats_reads_its_queue_through_an_index_not_the_table(
    open_store: StoreOpener, database: str
) -> None:
    async with open_store(listen=False) as store:
        for n in range(5):
            queue = QueueKey(ACCOUNT, f"q{n}")
            await store.create_queue(queue, QueueConfig(), {}, now=None)
            for start in range(0, 1_000, 10):
                batch = [NewMessage(id=f"{n}-{start + i}", body="x") for i in range(10)]
                await store.send(queue, batch, now=None)
    connection = await asyncpg.connect(database, server_settings={"search_path": "hopper"})
    try:
        await connection.execute("ANALYZE")
        [row] = await connection.fetch(
            "EXPLAIN (FORMAT JSON) " + queries()["stats"], ACCOUNT, "q3", None
        )
    finally:
        await connection.close()
    on_messages = [node for node in scans(json.loads(row[0])[0]["Plan"]) if node[1] == "messages"]
    assert on_messages
    assert all(kind != "Seq Scan" for kind, _, _ in on_messages)
