"""The claim's query plan: a Postgres property no contract test can see. Guards the
index choice documented in migrations/0001_initial.sql."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import asyncpg

from hopper.core.model import NewMessage, QueueConfig, QueueKey
from hopper.store.postgres import PostgresQueueStore
from hopper.store.postgres.schema import queries

from .conftest import StoreOpener

ACCOUNT = "000000000000"


async def fill_queues(store: PostgresQueueStore, count: int) -> None:
    """Queues q0..q<count-1> of 1,000 messages each, so that a plan has rows of other
    queues to avoid."""
    for n in range(count):
        queue = QueueKey(ACCOUNT, f"q{n}")
        await store.create_queue(queue, QueueConfig(), {}, now=None)
        for start in range(0, 1_000, 10):
            batch = [NewMessage(id=f"{n}-{start + i}", body="x") for i in range(10)]
            await store.send(queue, batch, now=None)


async def generic_plan(
    database: str,
    sql: str,
    *args: object,
    mode: str = "force_generic_plan",
    analyze: bool = True,
) -> dict[str, Any]:
    """The plan the store runs `sql` with, after an ANALYZE (unless not `analyze`): its
    connections keep a prepared statement's generic plan, but for the few statements
    it plans for their values (`mode` force_custom_plan: _planned_for_values)."""
    connection = await asyncpg.connect(
        database, server_settings={"search_path": "hopper", "plan_cache_mode": mode}
    )
    try:
        if analyze:
            await connection.execute("ANALYZE")
        # EXECUTE of a prepared statement, as the store's connections run it: an EXPLAIN
        # given parameters would plan for their values whatever plan_cache_mode says.
        await connection.execute(f"PREPARE planned AS {sql}")
        values = ", ".join(_literal(arg) for arg in args)
        row = await connection.fetchrow(
            f"EXPLAIN (FORMAT JSON) EXECUTE planned({values})" if args
            else "EXPLAIN (FORMAT JSON) EXECUTE planned"
        )
    finally:
        await connection.close()
    assert row is not None
    plan: dict[str, Any] = json.loads(row[0])[0]["Plan"]
    return plan


def scans(plan: dict[str, Any]) -> list[tuple[str, str | None, str | None]]:
    """(node type, relation, index) of every node of an EXPLAIN (FORMAT JSON) plan."""
    found = [(plan["Node Type"], plan.get("Relation Name"), plan.get("Index Name"))]
    for child in plan.get("Plans", []):
        found.extend(scans(child))
    return found


async def test_the_claim_scans_the_queue_order_index_not_the_table(
    open_store: StoreOpener, database: str
) -> None:
    async with open_store(listen=False) as store:
        await fill_queues(store, 5)
    plan = await generic_plan(
        database, queries()["receive_messages"], ACCOUNT, "q3", None, 10, 30.0, []
    )
    nodes = scans(plan)
    on_messages = [node for node in nodes if node[1] == "messages"]
    assert ("Seq Scan", "messages", None) not in on_messages
    assert any(index == "messages_queue_order" for _, _, index in on_messages)


async def test_the_claims_are_prepared_once_a_connection_not_planned_at_each_receive(
    open_store: StoreOpener,
) -> None:
    # asyncpg keeps a prepared statement only for texts up to a length (pool.py,
    # STATEMENT_CACHE_LIMIT); a longer claim was parsed and planned at every receive.
    fifo, plain = QueueKey(ACCOUNT, "p.fifo"), QueueKey(ACCOUNT, "p")
    async with open_store(min_size=1, max_size=1, listen=False) as store:
        await store.create_queue(fifo, QueueConfig(fifo=True), {}, now=None)
        await store.create_queue(plain, QueueConfig(), {}, now=None)
        for queue in (fifo, fifo, plain, plain):
            await store.receive(queue, max_messages=10, visibility_timeout=30, now=None)
        # receives sharing turns: one claim for each turn (receive_fifo_turn)
        for _ in range(2):
            await asyncio.gather(*(
                store.receive(fifo, max_messages=10, visibility_timeout=30, now=None)
                for _ in range(4)
            ))
        store._probes_due[fifo] = 2  # (as after a walk that fell short: fifo.py)
        for queue in (fifo, fifo):
            await store.receive(queue, max_messages=10, visibility_timeout=30, now=None)
        async with store._db.acquire() as connection:
            prepared = await connection.fetch("SELECT statement FROM pg_prepared_statements")
    texts = [row["statement"] for row in prepared]
    claims = ("receive_fifo_walk", "receive_fifo_turn", "receive_fifo_messages",
              "receive_fair_messages")
    for claim in claims:
        assert texts.count(queries()[claim]) == 1, claim


async def test_the_stores_connections_compile_no_plan(open_store: StoreOpener) -> None:
    # A generic plan whose estimate passes jit_above_cost is JIT-compiled at every
    # execution: the FIFO claim over a table of 340,000 messages took 2 s so, against
    # 0.6 ms. Here the threshold is 0, so any plan would pass it, and yet the store's
    # connections compile none.
    claim = queries()["receive_fifo_messages"]
    async with open_store(min_size=1, max_size=1, listen=False) as store:
        await store.create_queue(QueueKey(ACCOUNT, "j.fifo"), QueueConfig(fifo=True), {},
                                 now=None)
        async with store._db.acquire() as connection, connection.transaction():
            await connection.execute("SET LOCAL jit_above_cost = 0")
            await connection.execute(f"PREPARE jitted AS {claim}")
            row = await connection.fetchrow(
                "EXPLAIN (ANALYZE, FORMAT JSON)"
                f" EXECUTE jitted('{ACCOUNT}', 'j.fifo', NULL, 10, 30.0, '{{}}', 1, NULL)"
            )
            await connection.execute("DEALLOCATE jitted")
    assert row is not None
    assert "JIT" not in json.loads(row[0])[0]


async def claimed_plans(open_store: StoreOpener, database: str) -> dict[str, dict[str, Any]]:
    """The generic plan of each claim's update (CTE `claimed`: queries.sql,
    claim_deliveries), by statement, on queues holding messages."""
    async with open_store(listen=False) as store:
        await fill_queues(store, 2)
        fifo = QueueKey(ACCOUNT, "f.fifo")
        await store.create_queue(fifo, QueueConfig(fifo=True), {}, now=None)
        await store.send(fifo, [NewMessage(id="f-1", body="x", group_id="g",
                                           deduplication_id="1")], now=None)
    statements = {
        "receive_messages": (ACCOUNT, "q1", None, 160, 30.0, []),
        "receive_fair_messages": (ACCOUNT, "q1", None, 160, 30.0, [], 2, 0.5),
        "receive_fifo_messages": (ACCOUNT, "f.fifo", None, 10, 30.0, [], 0, None),
        "receive_fifo_walk": (ACCOUNT, "f.fifo", None, 10, 30.0, [], 0, None),
        "receive_fifo_turn": (ACCOUNT, "f.fifo", None, 2, 30.0, [], [10, 10], None),
    }
    plans = {}
    for name, args in statements.items():
        plan = await generic_plan(database, queries()[name], *args)
        [plans[name]] = subplans(plan, {"CTE claimed"})
    return plans


async def test_a_claims_deliveries_join_each_picked_message_once(
    open_store: StoreOpener, database: str
) -> None:
    # The claims' update (queries.sql, claim_deliveries) joins what the claim picked to
    # the rows it writes. A CTE of the backoffs joined back by id gave the generic plan a
    # nested loop over both CTEs, every pair compared (a claim of 160 messages: 25,600
    # comparisons, backends 42-47 us a drained message against 17-23): the update reads
    # no CTE but `picked` and the queue's `q`.
    for name, claimed in (await claimed_plans(open_store, database)).items():
        read = [node.get("CTE Name") for node in nodes(claimed) if node["Node Type"] == "CTE Scan"]
        assert sorted(read) == ["picked", "q"], (name, read)


async def test_a_claim_writes_the_rows_it_locked_by_their_address(
    open_store: StoreOpener, database: str
) -> None:
    # The claims' update finds each picked row by the ctid its lock read (a Tid Scan),
    # not by a probe of the primary key a message: those probes were a tenth of a
    # drain's database CPU (bench/README.md, branch pgdrain3).
    for name, claimed in (await claimed_plans(open_store, database)).items():
        read = [
            node["Node Type"] for node in nodes(claimed)
            if node.get("Relation Name") == "messages"
        ]
        assert read == ["ModifyTable", "Tid Scan"], (name, read)



async def test_a_delete_finds_rows_by_the_address_their_claim_left(
    open_store: StoreOpener, database: str
) -> None:
    # A delete first looks at the address the receipt's claim returned (a Tid Scan),
    # and probes the primary key only for the receipts it did not delete there: those
    # probes were a third of a delete's database CPU (bench/README.md, branch pgdrain4).
    async with open_store(listen=False) as store:
        await fill_queues(store, 2)
    plan = await generic_plan(
        database, queries()["delete_messages"],
        ACCOUNT, "q1", None, ["1-1"], "1", False, "(0,1)",
    )
    [by_address, by_key] = subplans(plan, {"CTE by_address", "CTE by_key"})
    read = [
        (node["Node Type"], node.get("Index Name")) for node in nodes(by_address)
        if node.get("Relation Name") == "messages"
    ]
    assert read == [("ModifyTable", None), ("Tid Scan", None)]
    read = [
        (node["Node Type"], node.get("Index Name")) for node in nodes(by_key)
        if node.get("Relation Name") == "messages"
    ]
    assert read == [("ModifyTable", None), ("Index Scan", "messages_pkey")]
    # the receipts by_address deleted are left out by a hash of them, not a scan of
    # by_address a receipt
    filters = [node.get("Filter", "") for node in nodes(by_key)]
    assert any("hashed SubPlan" in text for text in filters), filters

def _literal(value: object) -> str:
    """`value` as an SQL literal, for EXECUTE (of the few kinds the claims take)."""
    if value is None:
        return "NULL"
    if isinstance(value, list):
        return "'{" + ",".join(map(str, value)) + "}'"
    return f"'{value}'"


def nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    """Every node of an EXPLAIN (FORMAT JSON) plan."""
    found = [plan]
    for child in plan.get("Plans", []):
        found.extend(nodes(child))
    return found


async def test_the_fifo_claim_finds_groups_and_runs_through_the_group_index(
    open_store: StoreOpener, database: str
) -> None:
    # The FIFO claim looks at each group's head and at the runs of the groups it serves:
    # index probes, never a read of the queue or a sort of it.
    async with open_store(listen=False) as store:
        await fill_queues(store, 3)
        for n in range(3):
            queue = QueueKey(ACCOUNT, f"f{n}.fifo")
            await store.create_queue(queue, QueueConfig(fifo=True), {}, now=None)
            for start in range(0, 500, 10):
                batch = [
                    NewMessage(id=f"f{n}-{start + i}", body="x", group_id=f"g{start % 100 + i}",
                               deduplication_id=f"{start + i}")
                    for i in range(10)
                ]
                await store.send(queue, batch, now=None)
    runs = {"CTE first_run", "CTE chosen"}
    turn = (ACCOUNT, "f1.fifo", None, 2, 30.0, [], [10, 10], None)
    claim_of_10 = (ACCOUNT, "f1.fifo", None, 10, 30.0, [], 0, None)
    for claim, args in (
        ("receive_fifo_messages", claim_of_10),
        ("receive_fifo_turn", turn),
        ("receive_fifo_walk", claim_of_10),  # (last: its plan is looked at below)
    ):
        plan = await generic_plan(database, queries()[claim], *args)
        on_messages = [
            node for part in subplans(plan, runs) for node in scans(part) if node[1] == "messages"
        ]
        assert on_messages, claim
        assert all(kind != "Seq Scan" for kind, _, _ in on_messages), claim
    # A queue of many groups is claimed by walking the queue in send order, which must be
    # an ordered index scan that stops at the first few fresh heads: neither a bitmap
    # scan nor a sort of the queue.
    [heads] = subplans(plan, {"CTE heads"})
    walked = scans(heads)
    assert ("Index Scan", "messages", "messages_queue_order") in walked
    assert all(kind not in ("Bitmap Heap Scan", "Sort") for kind, _, _ in walked)
    # It stops at the fresh head after the $4-th by the window's run condition
    # (PostgreSQL 15 and later; without it the walk reads its 512 messages every time).
    [counting] = [node for node in nodes(heads) if node["Node Type"] == "WindowAgg"]
    assert "Run Condition" in counting


async def test_statements_that_find_messages_never_list_a_queue_by_send_time(
    open_store: StoreOpener, database: str
) -> None:
    # Statistics taken while the queues were small, then one queue grows: the generic
    # plans must still walk send order or look messages up by id, not read the whole
    # queue through messages_queue_sent (the retention filter is `sent_at + 0`).
    async with open_store(listen=False) as store:
        for n in range(5):
            queue = QueueKey(ACCOUNT, f"small{n}")
            await store.create_queue(queue, QueueConfig(), {}, now=None)
            await store.send(queue, [NewMessage(id=f"{n}-{i}", body="x") for i in range(5)],
                             now=None)
        connection = await asyncpg.connect(database, server_settings={"search_path": "hopper"})
        try:
            await connection.execute("ANALYZE")
        finally:
            await connection.close()
        big = QueueKey(ACCOUNT, "big")
        await store.create_queue(big, QueueConfig(), {}, now=None)
        for start in range(0, 5_000, 100):
            batch = [NewMessage(id=f"big-{start + i}", body="x") for i in range(100)]
            await store.send(big, batch, now=None)
    q = queries()
    # (statement, its parameters, the parts that find messages: CTE names, or None for
    # the whole plan). A claim's `expired` part may use the index: it looks for rows
    # past retention, which it finds at once or not at all; a fair claim's `fair` part
    # sorts the whole queue by design (only while a tenant is noisy).
    statements = [
        ("receive_messages", (ACCOUNT, "big", None, 10, 30.0, []), {"CTE picked"}),
        (
            "receive_fifo_messages",
            (ACCOUNT, "big", None, 10, 30.0, [], 0, None),
            {"CTE first_run", "CTE chosen"},
        ),
        (
            "receive_fifo_walk",
            (ACCOUNT, "big", None, 10, 30.0, [], 0, None),
            {"CTE heads", "CTE first_run", "CTE chosen"},
        ),
        (
            "receive_fifo_turn",
            (ACCOUNT, "big", None, 2, 30.0, [], [10, 10], None),
            {"CTE heads", "CTE chosen"},
        ),
        (
            "receive_fair_messages",
            (ACCOUNT, "big", None, 10, 30.0, [], 2, 0.5),
            {"CTE oldest"},
        ),
        (
            "delete_messages",
            (ACCOUNT, "big", None, ["big-1"], "1", False, "(0,1)"),
            None,
        ),
    ]
    for name, args, parts in statements:
        plan = await generic_plan(database, q[name], *args, analyze=False)
        found = [plan] if parts is None else subplans(plan, parts)
        assert len(found) == (1 if parts is None else len(parts)), name
        for part in found:
            on_messages = [node for node in scans(part) if node[1] == "messages"]
            assert on_messages, name
            assert all(index != "messages_queue_sent" for _, _, index in on_messages), name
            assert all(kind != "Seq Scan" for kind, _, _ in on_messages), name


# The send statements' arguments for one message of FIFO queue q.fifo, as SQL text
# (EXPLAIN EXECUTE takes no bound parameters).
FIFO_SENDS = {
    "send_messages": "'000000000000', 'q.fifo', NULL, ARRAY['new'], ARRAY['x'], ARRAY['{}'],"
    " ARRAY[NULL], ARRAY[0.0], ARRAY['g'], ARRAY['1'], 300.0, NULL, ARRAY['1']",
    "send_fifo_messages": "'000000000000', 'q.fifo', NULL, '[{\"i\": \"new\", \"b\": \"x\","
    " \"a\": {}, \"h\": null, \"d\": 0.0, \"g\": \"g\", \"k\": \"1\", \"w\": \"1\"}]',"
    " 300.0",
}


async def test_a_fifo_send_probes_the_deduplication_window_never_reads_it(
    open_store: StoreOpener, database: str
) -> None:
    # A connection keeps the generic plan it made at its first send, while the window
    # was empty; then the window grows (a busy queue holds five minutes of deduplication
    # ids). The plan must still probe fifo_dedup by key, for the ids a send takes and for
    # a duplicate's holder: a hash join read the queue's whole window once per FIFO send.
    queue = QueueKey(ACCOUNT, "q.fifo")
    connection = await asyncpg.connect(
        database,
        server_settings={"search_path": "hopper", "plan_cache_mode": "force_generic_plan"},
    )
    try:
        async with open_store(listen=False) as store:
            await store.create_queue(queue, QueueConfig(fifo=True), {}, now=None)
            for name, args in FIFO_SENDS.items():
                await connection.execute(f"PREPARE {name} AS {queries()[name]}")
                await connection.execute(f"EXECUTE {name} ({args})")  # planned here
            for start in range(0, 3_000, 100):
                batch = [
                    NewMessage(id=f"m{n}", body="x", group_id=f"g{n % 100}",
                               deduplication_id=f"d{n}")
                    for n in range(start, start + 100)
                ]
                await store.send(queue, batch, now=None)
        for name, args in FIFO_SENDS.items():
            text = await connection.fetchval(f"EXPLAIN (FORMAT JSON) EXECUTE {name} ({args})")
            on_window = {
                node for node in scans(json.loads(text)[0]["Plan"]) if node[1] == "fifo_dedup"
            }
            assert on_window == {
                ("ModifyTable", "fifo_dedup", None),
                ("Index Scan", "fifo_dedup", "fifo_dedup_pkey"),
            }, name
    finally:
        await connection.close()


def subplans(plan: dict[str, Any], names: set[str]) -> list[dict[str, Any]]:
    """The nodes of `plan` named `names` (EXPLAIN's "Subplan Name", e.g. "CTE picked")."""
    found = [plan] if plan.get("Subplan Name") in names else []
    for child in plan.get("Plans", []):
        found.extend(subplans(child, names))
    return found


async def test_the_store_plans_each_statement_once_per_connection(open_store: StoreOpener) -> None:
    # Custom plans re-planned the claim on every execution (0.9 ms of planning for 0.25
    # ms of work); the store's statements are keyed by queue, so one plan serves all.
    async with open_store(listen=False) as store, store._db.acquire() as connection:
        assert await connection.fetchval("SHOW plan_cache_mode") == "force_generic_plan"


def walked(plan: dict[str, Any], index: str) -> int:
    """How many index entries the nodes of an EXPLAIN (ANALYZE, FORMAT JSON) plan read
    through `index`, over all their loops."""
    found = 0
    if plan.get("Index Name") == index:
        found += plan["Actual Rows"] * plan["Actual Loops"]
    for child in plan.get("Plans", []):
        found += walked(child, index)
    return found


async def test_the_fifo_claim_of_many_groups_mostly_in_flight_reads_no_backlog(
    open_store: StoreOpener, database: str
) -> None:
    # Given a backlog of 3,000 messages in 100 groups, 95 of them in flight: fewer fresh
    # heads than the claim asks for. The walk stops at the queue's first 512 messages and
    # claims nothing (walking the whole queue in send order, a probe per message, cost 25
    # ms a claim on such a queue); the probes of every group claim instead.
    queue = QueueKey(ACCOUNT, "backlog.fifo")
    async with open_store(listen=False) as store:
        await store.create_queue(queue, QueueConfig(fifo=True), {}, now=None)
        for number in range(30):
            batch = [
                NewMessage(
                    id=f"{g}-{number}", body="x", group_id=f"g{g}", deduplication_id=f"{g}-{number}"
                )
                for g in range(100)
            ]
            await store.send(queue, batch, now=None)
        for _ in range(95):
            await store.receive(queue, max_messages=1, visibility_timeout=600, now=None)
    connection = await asyncpg.connect(
        database,
        server_settings={"search_path": "hopper", "plan_cache_mode": "force_generic_plan"},
    )
    plans = {}
    try:
        await connection.execute("ANALYZE")
        for claim in ("receive_fifo_walk", "receive_fifo_messages"):
            statement = await connection.prepare(
                "EXPLAIN (ANALYZE, FORMAT JSON) " + queries()[claim]
            )
            async with connection.transaction():
                row = await statement.fetchrow(ACCOUNT, "backlog.fifo", None, 10, 30.0, [], 0, None)
            assert row is not None
            plans[claim] = json.loads(row[0])[0]["Plan"]
    finally:
        await connection.close()
    walk, probes = plans["receive_fifo_walk"], plans["receive_fifo_messages"]
    assert walked(walk, "messages_queue_order") <= 600
    assert walk["Actual Rows"] == 1  # the row of the queue's facts, no delivery
    # the probes read no send order but the head's housekeeping; the 5 groups' runs, 10
    # messages
    assert walked(probes, "messages_queue_order") <= 8
    assert probes["Actual Rows"] == 10
