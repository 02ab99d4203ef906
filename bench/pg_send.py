"""Sends per second on the Postgres store, with and without a pg_notify inside the
send transaction (the trap the design notes warn about).

    PYTHONPATH=server python bench/pg_send.py [--seconds 5] [--workers 16]

Each run uses a fresh database cloned from the migrated template. "coalesced" is what
PostgresQueueStore does: concurrent sends of the queue share a statement
(store/postgres/coalesce.py), and the listener sends one NOTIFY per queue per few milliseconds on
its own connection. "one per send" is the same store with statement coalescing off:
each send its own statement and commit, NOTIFYs still coalesced by the listener.
"notify in txn" runs that send statement plus `pg_notify` in one transaction, as a
naive store would.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from hopper.core.model import NewMessage, QueueConfig, QueueKey  # noqa: E402
from hopper.store.postgres import PostgresQueueStore  # noqa: E402
from hopper.store.postgres.schema import queries  # noqa: E402
from postgres.databases import fresh_database  # noqa: E402

QUEUE = QueueKey("000000000000", "bench")


async def coalesced(store: PostgresQueueStore, stop: float) -> int:
    sent = 0
    while time.monotonic() < stop:
        await store.send(QUEUE, [NewMessage(id=str(uuid.uuid4()), body="x" * 100)], now=None)
        sent += 1
    return sent


async def notify_in_transaction(store: PostgresQueueStore, stop: float) -> int:
    sql = queries()["send_plain_messages"]  # the statement "one per send" runs
    pool = store._db  # the bench reaches inside on purpose: it measures a design it rejects
    sent = 0
    while time.monotonic() < stop:
        message = {"i": str(uuid.uuid4()), "b": "x" * 100, "a": [], "h": None, "d": 0.0, "g": None}
        async with pool.acquire() as connection, connection.transaction():
            await connection.fetch(sql, QUEUE.account, QUEUE.name, None, json.dumps([message]))
            await connection.execute("SELECT pg_notify('hopper_wakeup', $1)", "x 0/bench")
        sent += 1
    return sent


async def run(kind: str, seconds: float, workers: int) -> float:
    async with fresh_database() as dsn:
        store = PostgresQueueStore(
            dsn, min_size=workers, max_size=workers, coalesce=kind == "coalesced"
        )
        await store.start(lambda key, count: None)
        try:
            await store.create_queue(QUEUE, QueueConfig(), {}, now=None)
            worker = notify_in_transaction if kind == "notify in txn" else coalesced
            stop = time.monotonic() + seconds
            counts = await asyncio.gather(*(worker(store, stop) for _ in range(workers)))
        finally:
            await store.close()
    return sum(counts) / seconds


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--workers", type=int, default=16)
    args = parser.parse_args()
    for kind in ("coalesced", "one per send", "notify in txn") * 2:
        rate = await run(kind, args.seconds, args.workers)
        print(f"{kind:>14}: {rate:8.0f} sends/s ({args.workers} workers, {args.seconds:.0f}s)")


if __name__ == "__main__":
    asyncio.run(main())
