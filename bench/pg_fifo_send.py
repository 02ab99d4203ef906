"""FIFO SendMessageBatch on the Postgres store alone: what a batch of ten messages over
100 message groups, each with its own deduplication id, costs in CPU a message, beside
the same batches to a standard queue (the benchmark's fifo-batch and batch rows without
HTTP).

    PYTHONPATH=server python bench/pg_fifo_send.py [--messages 40000] [--workers 16] \
        [--batch 10]

CPU a message: the store's database backends (read from /proc, as bench/pg_drain.py
does) and this process (the store's Python, asyncpg, the workers' own loop and the
messages they make). The statements' sizes are the messages each send statement
carried (concurrent sends of a queue share one: store/postgres/coalesce.py). Without
HTTP the workers move in step, so a statement carries nearly every worker's batch
(160 messages; through the benchmark's HTTP about 55-65).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import sys
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.meter import process_seconds  # noqa: E402
from bench.pg_drain import backends  # noqa: E402
from hopper.core.model import NewMessage, QueueConfig, QueueKey  # noqa: E402
from hopper.store.postgres import PostgresQueueStore, sends  # noqa: E402
from postgres.databases import fresh_database  # noqa: E402

GROUPS = 100
sizes: list[int] = []


def batch(queue: QueueKey, numbers: itertools.count[int], size: int) -> list[NewMessage]:
    if not queue.is_fifo:
        return [NewMessage(id=str(uuid.uuid4()), body="x" * 100) for _ in range(size)]
    messages = []
    for _ in range(size):
        number = next(numbers)
        messages.append(
            NewMessage(
                id=str(uuid.uuid4()),
                body="x" * 100,
                group_id=f"g{number % GROUPS}",
                deduplication_id=str(number),
            )
        )
    return messages


async def worker(
    store: PostgresQueueStore, queue: QueueKey, left: list[int], size: int
) -> None:
    numbers = itertools.count(left[0] * 1000)
    while left[0] > 0:
        left[0] -= size
        await store.send(queue, batch(queue, numbers, size), now=None)


async def measure(
    store: PostgresQueueStore, queue: QueueKey, messages: int, workers: int, size: int
) -> str:
    await store.create_queue(
        queue, QueueConfig(fifo=queue.is_fifo), {}, now=None
    )
    left = [messages]
    pids = await backends(store)
    sizes.clear()
    database_before = sum(process_seconds(pid) for pid in pids)
    own_before = time.process_time()
    started = time.monotonic()
    await asyncio.gather(*(worker(store, queue, left, size) for _ in range(workers)))
    elapsed = time.monotonic() - started
    own = time.process_time() - own_before
    database = sum(process_seconds(pid) for pid in pids) - database_before
    # No sizes when store/postgres/sends.py runs compiled: its calls of send_unique
    # do not go through the module attribute `counting` wraps.
    statements = (
        f"{sum(sizes) / len(sizes):.0f} messages a statement"
        if sizes
        else "statements not counted (sends.py compiled)"
    )
    return (
        f"{queue.name:>10}: {messages / elapsed:7.0f} msg/s; CPU a message: backends "
        f"{database / messages * 1e6:5.1f} us, this process {own / messages * 1e6:5.1f} us; "
        f"{statements}"
    )



def counting(sizes: list[int]) -> None:
    """Note the messages each send statement carries (the bench reaches inside on
    purpose: the store's two send functions, wrapped)."""
    for name, position in (("send_unique", 4), ("send_plain_across", 4)):
        run = getattr(sends, name)

        async def counted(*args: Any, run: Any = run, position: int = position) -> Any:
            sizes.append(len(args[position - 1]))
            return await run(*args)

        setattr(sends, name, counted)

async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=40_000)
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--batch", type=int, default=10, help="messages a send")
    args = parser.parse_args()
    counting(sizes)
    async with fresh_database() as dsn:
        store = PostgresQueueStore(dsn, min_size=args.workers, max_size=args.workers)
        await store.start(lambda key: None)
        try:
            for queue in (QueueKey("000000000000", "plain"), QueueKey("000000000000", "f.fifo")):
                print(await measure(store, queue, args.messages, args.workers, args.batch))
        finally:
            await store.close()


if __name__ == "__main__":
    asyncio.run(main())
