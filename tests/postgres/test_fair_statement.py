"""The fair claim (receive_fair_messages) is receive_messages but for how it picks; it
is a second copy of the statement so that queues that never use group ids pay nothing
for fairness (see PostgresQueueStore._grouped). Postgres-only: these guard the SQL
text and plan, which no contract test can see."""

from __future__ import annotations

from hopper.core import fairness
from hopper.store.schema import queries

from .conftest import StoreOpener
from .test_query_plan import fill_queues, generic_plan, scans

ACCOUNT = "000000000000"


def outside_the_picking(statement: str, picking_starts: str) -> tuple[str, str]:
    """The statement's text before its picking CTEs, and from the poison step to the
    deliveries' RETURNING (the fair claim also returns each delivery's rank)."""
    body = statement[statement.index("WITH t AS") :]
    tail = body[body.index("-- poison:") :]
    return body[: body.index(picking_starts)], tail[: tail.index("    RETURNING m.*")]


def test_the_fair_claim_differs_from_the_plain_one_only_in_how_it_picks() -> None:
    sql = queries()
    plain = outside_the_picking(sql["receive_messages"], "-- the oldest receivable messages")
    fair = outside_the_picking(sql["receive_fair_messages"], "-- fair queues: the in-flight")
    assert fair == plain


def test_the_fifo_claim_differs_from_the_plain_one_only_in_how_it_picks() -> None:
    sql = queries()
    plain = outside_the_picking(sql["receive_messages"], "-- the oldest receivable messages")
    fifo = outside_the_picking(sql["receive_fifo_messages"], "-- FIFO: the queue's groups")
    assert fifo == plain


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
