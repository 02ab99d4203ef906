"""The FIFO claim (receive_fifo_messages) on queues of different shapes: how long one
claim of 10 takes, on a queue of N messages in G groups, with the first 10 in flight
(or the first message of H groups, leaving fewer fresh groups than the claim asks for).
The claim probes each group of a queue of few groups and walks a queue of many groups
to its first fresh heads, or probes them all when the walk finds too few (queries.sql);
this shows each side of those choices.

    PYTHONPATH=server python bench/pg_fifo_claim.py [--rounds 7]

Prints, per shape, the best of `rounds` runs of 10 claims (a zero lease, so that every
claim finds the queue as the one before it did), in milliseconds per claim.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import asyncpg  # noqa: E402

from hopper.core.model import NewMessage, QueueConfig, QueueKey  # noqa: E402
from hopper.store.postgres import PostgresQueueStore  # noqa: E402
from hopper.store.postgres.schema import queries  # noqa: E402
from postgres.databases import fresh_database  # noqa: E402

QUEUE = QueueKey("000000000000", "bench.fifo")
# (messages, groups, groups held in flight: 0 for one receive of 10)
SHAPES = [
    (2_000, 1, 0),
    (2_000, 50, 0),
    (2_000, 200, 0),
    (2_000, 2_000, 0),
    (10_000, 100, 0),
    (10_000, 10_000, 0),
    (5_000, 100, 95),
]


async def fill(dsn: str, messages: int, groups: int, held: int) -> None:
    store = PostgresQueueStore(dsn, listen=False)
    await store.start(lambda *_: None)
    try:
        await store.create_queue(QUEUE, QueueConfig(fifo=True), {}, now=None)
        for start in range(0, messages, 100):
            batch = [
                NewMessage(id=str(n), body="x", group_id=f"g{n % groups}", deduplication_id=str(n))
                for n in range(start, start + 100)
            ]
            await store.send(QUEUE, batch, now=None)
        if not held:
            await store.receive(QUEUE, max_messages=10, visibility_timeout=600, now=None)
        for _ in range(held):
            await store.receive(QUEUE, max_messages=1, visibility_timeout=600, now=None)
    finally:
        await store.close()


async def claim_ms(dsn: str, rounds: int) -> float:
    connection = await asyncpg.connect(
        dsn, server_settings={"search_path": "hopper", "plan_cache_mode": "force_generic_plan"}
    )
    try:
        await connection.execute("VACUUM ANALYZE")
        statement = await connection.prepare(queries()["receive_fifo_messages"])
        args = (QUEUE.account, QUEUE.name, None, 10, 0.0, [], False, 0, None)
        best = float("inf")
        for _ in range(rounds):
            started = time.perf_counter()
            for _ in range(10):
                await statement.fetch(*args)
            best = min(best, (time.perf_counter() - started) / 10 * 1000)
        return best
    finally:
        await connection.close()


async def main(rounds: int) -> None:
    for messages, groups, held in SHAPES:
        async with fresh_database() as dsn:
            await fill(dsn, messages, groups, held)
            took = await claim_ms(dsn, rounds)
        shape = f"{messages:>6} messages in {groups:>6} groups"
        print(f"{shape}{f', {held} held' if held else '':<10}: {took:6.2f} ms a claim of 10")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    asyncio.run(main(parser.parse_args().rounds))
