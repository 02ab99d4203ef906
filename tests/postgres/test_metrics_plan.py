"""The plan of the stats statement that metrics and the dashboard count queues with:
it reads the rows of the queue asked about, through an index, never the whole
messages table (other queues' millions cost it nothing)."""

from __future__ import annotations

from hopper.store.postgres.schema import queries

from .conftest import StoreOpener
from .test_query_plan import ACCOUNT, fill_queues, generic_plan, scans


async def test_stats_reads_its_queue_through_an_index_not_the_table(
    open_store: StoreOpener, database: str
) -> None:
    async with open_store(listen=False) as store:
        await fill_queues(store, 5)
    plan = await generic_plan(
        database, queries()["stats"], ACCOUNT, "q3", None, mode="force_custom_plan"
    )
    on_messages = [node for node in scans(plan) if node[1] == "messages"]
    assert on_messages
    assert all(kind != "Seq Scan" for kind, _, _ in on_messages)
