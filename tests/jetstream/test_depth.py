"""The JetStream store has no depth limit: a queue deeper than its ledger's window
(10,000 messages and more) takes every send and gives every message back, while the
ledger, the one entry each receive reads and writes, stays as small as what is in
flight. JetStream-only: the ledger and its window are this store's own (the contract
suite says what every store does; this says what keeps this one's cost level).
"""

from __future__ import annotations

import asyncio
import uuid

import pytest

from hopper.core.clock import FakeClock
from hopper.core.model import NewMessage, QueueConfig, QueueKey, Receipt
from hopper.store.jetstream import JetStreamQueueStore

from .servers import one_node
from .stores import drop_prefix

DEPTH = 11_000


def _ignore(key: QueueKey, count: int | None = None) -> None:
    pass


async def _ledger_size(store: JetStreamQueueStore, key: QueueKey) -> int:
    loaded = await store._p.steps.load(key)
    assert loaded is not None
    return len(loaded.raw or b"")


@pytest.mark.slow
async def test_a_queue_deeper_than_the_ledgers_window_drains_whole_with_a_small_ledger() -> None:
    clock = FakeClock()
    prefix = f"t{uuid.uuid4().hex[:12]}"
    store = JetStreamQueueStore([one_node().url], prefix=prefix, clock=clock)
    await store.start(_ignore)
    try:
        key = QueueKey("000000000000", "deep")
        await store.create_queue(key, QueueConfig(), {}, now=clock.now())
        # given a queue holding more messages than the old one-entry limit (10,000)
        for start in range(0, DEPTH, 500):
            batches = [
                [NewMessage(id=str(uuid.uuid4()), body=f"m{i}") for i in range(j, j + 10)]
                for j in range(start, min(start + 500, DEPTH), 10)
            ]
            await asyncio.gather(*(store.send(key, b, now=clock.now()) for b in batches))
        assert (await store.stats(key, now=clock.now())).visible == DEPTH
        # when it is drained ten at a time
        seen: set[str] = set()
        largest = 0
        while True:
            got = await store.receive(key, max_messages=10, visibility_timeout=30, now=clock.now())
            if not got:
                break
            seen.update(d.message.body for d in got)
            receipts = [Receipt(d.message.id, d.token) for d in got]
            await store.delete(key, receipts, refuse_expired=False, now=clock.now())
            if len(seen) % 1_000 == 0:
                largest = max(largest, await _ledger_size(store, key))
        # then every message came back once, and the ledger never held the backlog
        assert seen == {f"m{i}" for i in range(DEPTH)}
        assert largest < 16 * 1024, largest
        assert (await store.stats(key, now=clock.now())).visible == 0
    finally:
        await store.close()
        await drop_prefix(one_node().url, prefix)
