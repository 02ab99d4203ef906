"""A drain's claims and deletes on database connections of their own, one after the
other: the backend CPU each costs a message, apart, at a statement size of your choice.

    PYTHONPATH=server python bench/pg_claim_delete.py [--messages 40000] [--size 160]

The store's own statements (receive_messages, then delete_messages with the addresses
the claim returned), run by this script on two connections of the store's pool, so
that each backend's CPU (/proc, as bench/meter.py reads it) is one statement's alone;
the store's VACUUMs run on a third and are not counted. Two sizes give a statement's
cost apart from its rows': claims and deletes of 10 and of 160 messages differ by
(1/10 - 1/160) statements a message (bench/README.md, branch pgdrain4).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.meter import process_seconds  # noqa: E402
from hopper.core.model import NewMessage, QueueConfig, QueueKey  # noqa: E402
from hopper.store.postgres import PostgresQueueStore  # noqa: E402
from hopper.store.postgres.schema import queries  # noqa: E402
from postgres.databases import fresh_database  # noqa: E402

QUEUE = QueueKey("000000000000", "drain")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=40_000)
    parser.add_argument("--size", type=int, default=160)
    args = parser.parse_args()
    sql = queries()
    async with fresh_database() as dsn:
        store = PostgresQueueStore(dsn, min_size=3, max_size=3)
        await store.start(lambda key: None)
        try:
            await store.create_queue(QUEUE, QueueConfig(), {}, now=None)
            for _ in range(args.messages // 5_000):
                batch = [NewMessage(id=str(uuid.uuid4()), body="x" * 100) for _ in range(5_000)]
                await store.send(QUEUE, batch, now=None)
            claims, deletes = await store._db.acquire(), await store._db.acquire()
            pids = [await c.fetchval("SELECT pg_backend_pid()") for c in (claims, deletes)]
            before = [process_seconds(pid) for pid in pids]
            started, total = time.monotonic(), 0
            while True:
                rows = await claims.fetch(
                    sql["receive_messages"], QUEUE.account, QUEUE.name, None, args.size, 30.0, []
                )
                rows = [row for row in rows if row["id"] is not None]
                if not rows:
                    break
                await deletes.fetch(
                    sql["delete_messages"], QUEUE.account, QUEUE.name, None,
                    [row["id"] for row in rows], ",".join(str(row["token"]) for row in rows),
                    False, ";".join(row["address"] for row in rows),
                )
                total += len(rows)
                store.vacuum.deleted(len(rows))
            elapsed = time.monotonic() - started
            claim, delete = (process_seconds(pid) - b for pid, b in zip(pids, before, strict=True))
            await store._db.release(claims)
            await store._db.release(deletes)
        finally:
            await store.close()
    print(f"{total} messages, {args.size} a statement, {total / elapsed:.0f} msg/s")
    print(
        f"backend CPU a message: claims {claim / total * 1e6:.2f} us, "
        f"deletes {delete / total * 1e6:.2f} us"
    )


if __name__ == "__main__":
    asyncio.run(main())
