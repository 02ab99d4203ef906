"""Receive + delete throughput on the Postgres store under a long drain, and whether
claims stay HOT updates (no new index entries: see migrations/0001_initial.sql).

    PYTHONPATH=server python bench/pg_drain.py [--messages 20000] [--workers 16]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from hopper.core.model import NewMessage, QueueConfig, QueueKey  # noqa: E402
from hopper.store.postgres import PostgresQueueStore  # noqa: E402
from postgres.databases import fresh_database  # noqa: E402

QUEUE = QueueKey("000000000000", "drain")


async def fill(store: PostgresQueueStore, count: int) -> None:
    for _ in range(count // 10):
        batch = [NewMessage(id=str(uuid.uuid4()), body="x" * 100) for _ in range(10)]
        await store.send(QUEUE, batch, now=None)


async def worker(store: PostgresQueueStore) -> int:
    done = 0
    while deliveries := await store.receive(
        QUEUE, max_messages=10, visibility_timeout=30, now=None
    ):
        await store.delete(QUEUE, [d.receipt for d in deliveries], refuse_expired=False, now=None)
        done += len(deliveries)
    return done


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--workers", type=int, default=16)
    args = parser.parse_args()
    async with fresh_database() as dsn:
        store = PostgresQueueStore(dsn, min_size=args.workers, max_size=args.workers)
        await store.start(lambda key: None)
        try:
            await store.create_queue(QUEUE, QueueConfig(), {}, now=None)
            await fill(store, args.messages)
            started = time.monotonic()
            counts = await asyncio.gather(*(worker(store) for _ in range(args.workers)))
            elapsed = time.monotonic() - started
            await asyncio.sleep(1)  # let the statistics collector catch up (a bench, not a test)
            row = await store._db.fetchrow(
                "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables"
                " WHERE relname = 'messages'"
            )
        finally:
            await store.close()
    total = sum(counts)
    print(
        f"receive+delete: {total / elapsed:8.0f} msg/s ({total} messages, {args.workers} workers)"
    )
    print(f"claims as HOT updates: {row['n_tup_hot_upd']} of {row['n_tup_upd']}")


if __name__ == "__main__":
    asyncio.run(main())
