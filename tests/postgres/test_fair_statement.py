"""The fair claim (receive_fair_messages) is receive_messages but for how it picks
(what they share is one text: tests/store/test_queries_file.py); it is a statement of
its own so that queues that never use group ids pay nothing for fairness (see
PostgresQueueStore._grouped). Postgres-only: this guards its plan, which no contract
test can see."""

from __future__ import annotations

from hopper.core import fairness
from hopper.store.postgres.schema import queries

from .conftest import StoreOpener
from .test_query_plan import fill_queues, generic_plan, scans

ACCOUNT = "000000000000"


async def test_the_fair_claim_counts_tenants_through_the_group_index(
    open_store: StoreOpener, database: str
) -> None:
    async with open_store(listen=False) as store:
        await fill_queues(store, 3)
    plan = await generic_plan(
        database, queries()["receive_fair_messages"],
        ACCOUNT, "q1", None, 10, 30.0, [], fairness.NOISY_MIN_IN_FLIGHT, fairness.NOISY_SHARE,
    )
    nodes = scans(plan)
    on_messages = [node for node in nodes if node[1] == "messages"]
    assert ("Seq Scan", "messages", None) not in on_messages
    assert any(index == "messages_queue_group" for _, _, index in on_messages)
