"""What one GET /metrics scrape costs on the Postgres store with a big queue.

Fills one queue with --messages messages (a bulk INSERT shaped like the store's own
rows; 1,000 of them then received, so some are in flight, and 1,000 delayed), plus a
dead-letter queue and --queues small queues, then times the scrape (metrics.scrape:
one stats statement per queue) and prints the big queue's stats plan.

    PYTHONPATH=server python bench/pg_scrape.py [--messages 1000000] [--queues 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import asyncpg  # noqa: E402

from hopper.core.model import DeadLetterRule, NewMessage, QueueConfig, QueueKey  # noqa: E402
from hopper.core.service import QueueService  # noqa: E402
from hopper.observability.metrics import scrape  # noqa: E402
from hopper.observability.overview import Counts  # noqa: E402
from hopper.store.postgres import PostgresQueueStore  # noqa: E402
from hopper.store.postgres.schema import queries  # noqa: E402
from postgres.databases import SCHEMA, fresh_database  # noqa: E402

ACCOUNT = "000000000000"
BIG = QueueKey(ACCOUNT, "big")
DEAD = QueueKey(ACCOUNT, "big-dead")

FILL = """
INSERT INTO messages (queue_id, id, body, sent_at, visible_at)
SELECT q.id, 'm' || n, 'payload of about a hundred bytes ' || repeat('x', 64),
       extract(epoch FROM now()) - 3600 + n / 1000.0,
       extract(epoch FROM now()) - 3600 + n / 1000.0 + CASE WHEN n > $2 THEN 7200 ELSE 0 END
FROM queues q, generate_series(1, $1) AS n
WHERE q.account = $3 AND q.name = $4
"""


def ignore(key: QueueKey) -> None:
    pass


async def main(messages: int, queues: int, rounds: int) -> None:
    async with fresh_database() as dsn:
        store = PostgresQueueStore(dsn, schema=SCHEMA, listen=False)
        await store.start(ignore)
        service = QueueService(store)
        try:
            await store.create_queue(DEAD, QueueConfig(), {}, now=None)
            config = QueueConfig(dead_letter=DeadLetterRule(DEAD, 5))
            await store.create_queue(BIG, config, {}, now=None)
            for n in range(queues):
                small = QueueKey(ACCOUNT, f"small-{n}")
                await store.create_queue(small, QueueConfig(), {}, now=None)
                await store.send(small, [NewMessage(id=f"s{n}", body="x")], now=None)
            connection = await asyncpg.connect(dsn, server_settings={"search_path": SCHEMA})
            started = time.perf_counter()
            # The last 1,000 are delayed (visible in two hours).
            await connection.execute(FILL, messages, messages - 1000, BIG.account, BIG.name)
            await store.receive(BIG, max_messages=10, visibility_timeout=600, now=None)
            for _ in range(99):
                await store.receive(BIG, max_messages=10, visibility_timeout=600, now=None)
            await connection.execute("VACUUM ANALYZE messages")
            print(f"filled {messages:,} messages in {time.perf_counter() - started:.1f} s")
            await scrape(service, Counts(service))  # warm: prepared statements, caches
            # Cold: every scrape counts every queue (a fresh Counts each time).
            cold = []
            for _ in range(rounds):
                began = time.perf_counter()
                await scrape(service, Counts(service))
                cold.append(time.perf_counter() - began)
            report("counting every queue", queues, cold)
            # As served: one Counts for all scrapes (back to back here, as several
            # scrapers and dashboards would ask): the big queue is counted again only
            # when its budget allows.
            counts = Counts(service)
            times = []
            for _ in range(rounds):
                began = time.perf_counter()
                text = await scrape(service, counts)
                times.append(time.perf_counter() - began)
            line = next(
                line for line in text.decode().splitlines()
                if line.startswith("hopper_queue_messages_visible{")
                and 'queue="big"' in line
            )
            print(line)
            report("as served (Counts reused)", queues, times)
            [row] = await connection.fetch(
                "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + queries()["stats"],
                BIG.account, BIG.name, None,
            )
            plan = json.loads(row[0])[0]
            print(f"stats plan for 'big': {plan['Execution Time']:.1f} ms")
            print_nodes(plan["Plan"])
            await connection.close()
        finally:
            await store.close()


def report(what: str, queues: int, times: list[float]) -> None:
    print(
        f"scrape of {queues + 2} queues, {what}: median {statistics.median(times) * 1000:.1f} ms,"
        f" min {min(times) * 1000:.1f} ms, max {max(times) * 1000:.1f} ms over {len(times)}"
    )


def print_nodes(node: dict, depth: int = 0) -> None:
    name = node["Node Type"]
    where = node.get("Index Name") or node.get("Relation Name") or ""
    buffers = node.get("Shared Hit Blocks", 0) + node.get("Shared Read Blocks", 0)
    print(f"  {'  ' * depth}{name} {where} rows={node.get('Actual Rows')} blocks={buffers}")
    for child in node.get("Plans", []):
        print_nodes(child, depth + 1)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--queues", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=10)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.messages, arguments.queues, arguments.rounds))
