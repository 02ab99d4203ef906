"""Bytes of memory the in-memory store keeps per stored message: tracemalloc over
100,000 sends of 100-byte messages into MemoryQueueStore, one message a call as a
SendMessage makes it. The bodies and ids are fresh strings, as decoded requests give
them (none shared). The goal (issue 19) is 250 bytes or less.

    PYTHONPATH=server python -m bench.memory_bytes [--messages 100000] [--top 8]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import tracemalloc

from hopper.core.ids import new_id
from hopper.core.model import NewMessage, QueueConfig, QueueKey
from hopper.store.memory import MemoryQueueStore

GOAL = 250


async def measure(messages: int, top: int = 0) -> float:
    """Bytes held per stored message (and, with `top`, the biggest holders printed)."""
    store = MemoryQueueStore()
    await store.start(lambda key, count: None)
    key = QueueKey("000000000000", "memory-bytes")
    await store.create_queue(key, QueueConfig(), {}, now=None)
    gc.collect()
    tracemalloc.start(1)
    before = tracemalloc.take_snapshot()
    for n in range(messages):
        # Made inside the count: the store keeps the body and id it was given.
        await store.send(key, [NewMessage(id=new_id(), body=f"{n:0100d}")], now=None)
    gc.collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    growth = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    for stat in after.compare_to(before, "lineno")[:top]:
        print(f"  {stat.size_diff / messages:7.1f} B/msg  {stat.traceback}")
    await store.close()
    return growth / messages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--top", type=int, default=8)
    args = parser.parse_args()
    per = asyncio.run(measure(args.messages, args.top))
    verdict = "met" if per <= GOAL else "MISSED"
    print(f"in-memory store: {per:.0f} bytes per stored 100-byte message "
          f"(goal <= {GOAL}: {verdict})")


if __name__ == "__main__":
    main()
