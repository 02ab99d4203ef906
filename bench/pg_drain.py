"""Receive + delete throughput on the Postgres store under a long drain, what it costs
in CPU a message, and whether claims stay HOT updates (no new index entries: see
migrations/0001_initial.sql).

    PYTHONPATH=server python bench/pg_drain.py [--messages 20000] [--workers 16] \
        [--ballast 0] [--fifo [--groups 100]] [--analyze]

CPU a message: the store's database backends (the pids pg_stat_activity lists for the
bench's database, read from /proc as bench/meter.py does; their VACUUMs included) and
this process (the store's Python, asyncpg, and the workers' own loop). `--ballast`
fills another queue of the same table first: VACUUM reads every index whole, so its
cost a drained message grows with the table (the full benchmark's drain follows its
batch runs' messages). The statements' sizes are the messages each claim and delete
statement carried (concurrent receives and deletes of a queue share one:
store/postgres/coalesce.py). `--fifo` drains a FIFO queue instead, its messages spread
round 100 message groups as the benchmark's FIFO rows are (or `--groups`); then the
claims' figure is the receives a FIFO turn carried (store.py: they take turns under the
queue's lock).
`--analyze` runs ANALYZE after the fill, as autovacuum soon would: the statements'
generic plans are made for the statistics the table has when a connection first runs
them (over a large table, the FIFO claim's plan passed PostgreSQL's JIT threshold: pool.py).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.meter import process_seconds  # noqa: E402
from hopper.core.model import NewMessage, QueueConfig, QueueKey  # noqa: E402
from hopper.store.postgres import PostgresQueueStore  # noqa: E402
from hopper.store.postgres.pool import held_on  # noqa: E402
from postgres.databases import fresh_database  # noqa: E402

QUEUE = QueueKey("000000000000", "drain")
FIFO_QUEUE = QueueKey("000000000000", "drain.fifo")
GROUPS = 100
BALLAST = QueueKey("000000000000", "ballast")


async def fill(
    store: PostgresQueueStore, queue: QueueKey, count: int, per_call: int, groups: int = GROUPS
) -> None:
    for call in range(count // per_call):
        numbers = range(call * per_call, (call + 1) * per_call)
        batch = [
            NewMessage(id=str(uuid.uuid4()), body="x" * 100)
            if not queue.is_fifo
            else NewMessage(
                id=str(uuid.uuid4()), body="x" * 100, group_id=f"g{n % groups}",
                deduplication_id=str(n),
            )
            for n in numbers
        ]
        await store.send(queue, batch, now=None)


async def worker(store: PostgresQueueStore, queue: QueueKey) -> int:
    done = 0
    while deliveries := await store.receive(
        queue, max_messages=10, visibility_timeout=30, now=None
    ):
        await store.delete(queue, [d.receipt for d in deliveries], refuse_expired=False, now=None)
        done += len(deliveries)
    return done


async def backends(store: PostgresQueueStore) -> list[int]:
    rows = await store._db.fetch(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
        " AND backend_type = 'client backend'"
    )
    return [row["pid"] for row in rows]


def counted(sizes: list[int], run: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    """`run` (a store's statement for a group), noting the size of each group."""

    async def counting(db: Any, group: Any, items: list[Any]) -> Any:
        sizes.append(len(items))
        return await run(db, group, items)

    return counting


def count_turns(store: PostgresQueueStore, sizes: list[int]) -> None:
    """Note the receives each of the store's FIFO turns carries."""
    hold = store._fifo_turns._hold

    @contextlib.asynccontextmanager
    async def counting_hold(key: Any) -> AsyncIterator[Callable[..., Awaitable[Any]]]:
        async with hold(key) as run:

            async def counting(group: Any, items: list[Any]) -> Any:
                sizes.append(len(items))
                return await run(group, items)

            yield counting

    store._fifo_turns._hold = counting_hold


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--ballast", type=int, default=0)
    parser.add_argument("--fifo", action="store_true")
    parser.add_argument("--analyze", action="store_true")
    parser.add_argument("--groups", type=int, default=GROUPS)
    args = parser.parse_args()
    queue = FIFO_QUEUE if args.fifo else QUEUE
    claims: list[int] = []
    deletes: list[int] = []
    async with fresh_database() as dsn:
        store = PostgresQueueStore(dsn, min_size=args.workers, max_size=args.workers)
        await store.start(lambda key: None)
        try:
            await store.create_queue(queue, QueueConfig(fifo=args.fifo), {}, now=None)
            await store.create_queue(BALLAST, QueueConfig(), {}, now=None)
            await fill(store, BALLAST, args.ballast, 5_000)
            await fill(store, queue, args.messages, 10, args.groups)
            if args.analyze:
                await store._db.execute("ANALYZE")
            # The statements the coalescers hold a connection for, counted.
            store._claims._hold = held_on(
                lambda: store._db, counted(claims, store._claim_group)
            )
            store._deletes._hold = held_on(
                lambda: store._db, counted(deletes, store._delete_group)
            )
            count_turns(store, claims)
            pids = await backends(store)
            database_before = sum(process_seconds(pid) for pid in pids)
            own_before = time.process_time()
            started = time.monotonic()
            counts = await asyncio.gather(*(worker(store, queue) for _ in range(args.workers)))
            elapsed = time.monotonic() - started
            own = time.process_time() - own_before
            database = sum(process_seconds(pid) for pid in pids) - database_before
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
    print(
        f"CPU a message: backends {database / total * 1e6:.1f} us, "
        f"this process {own / total * 1e6:.1f} us"
    )
    if claims and deletes:
        claim = "receives a FIFO turn" if args.fifo else "messages a statement: claims"
        print(
            f"{claim} {sum(claims) / len(claims):.1f}, "
            f"messages a delete statement {sum(deletes) / len(deletes):.1f}"
        )
    print(f"claims as HOT updates: {row['n_tup_hot_upd']} of {row['n_tup_upd']}")


if __name__ == "__main__":
    asyncio.run(main())
