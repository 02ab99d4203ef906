"""The JetStream store's retention sweep: it reads a queue's backlog into the ledger only
when something waiting there may have expired. JetStream-only: the backlog and the
ledger are this store's own (the contract suite's retention tests say what every store
answers; this says what keeps a busy deep queue's ledger small).
"""

from __future__ import annotations

import uuid

from hopper.core.clock import FakeClock
from hopper.core.model import NewMessage, QueueConfig, QueueKey, Receipt
from hopper.store.jetstream import JetStreamQueueStore

from .stores import jetstream_store

KEY = QueueKey("000000000000", "sweeps")


async def _held(store: JetStreamQueueStore) -> int:
    """How many messages the queue's ledger holds."""
    loaded = await store._p.steps.load(KEY, take=False)
    assert loaded is not None
    return len(loaded.ledger.queue.messages)


async def test_a_sweep_leaves_a_backlog_of_unexpired_messages_where_it_is() -> None:
    clock = FakeClock()
    async with jetstream_store(clock) as store:
        config = QueueConfig()
        await store.create_queue(KEY, config, {}, now=clock.now())
        for _ in range(100):
            batch = [NewMessage(id=str(uuid.uuid4()), body="x") for _ in range(10)]
            await store.send(KEY, batch, now=clock.now())
        # The first visit knows nothing of the queue: it reads as far as it may.
        assert await store.sweep_expired(limit=500, now=clock.now()) == 0
        assert await _held(store) >= 500
        # A drain takes 400 of them; the ledger keeps its read-ahead.
        drained = 0
        while drained < 400:
            got = await store.receive(KEY, max_messages=10, visibility_timeout=30, now=clock.now())
            receipts = [Receipt(d.message.id, d.token) for d in got]
            await store.delete(KEY, receipts, refuse_expired=False, now=clock.now())
            drained += len(got)
        before = await _held(store)

        # What waits in the backlog was sent after what the ledger holds, none of which
        # has expired: the visit reads no backlog.
        assert await store.sweep_expired(limit=500, now=clock.now()) == 0
        assert await _held(store) == before < 500

        # Once the ledger's messages may have expired, the sweep reads the backlog again
        # and frees what waits there too.
        clock.advance(config.message_retention_period + 1)
        assert await store.sweep_expired(limit=500, now=clock.now()) == 500
        assert await store.sweep_expired(limit=500, now=clock.now()) == 100
        stats = await store.stats(KEY, now=clock.now())
        assert stats is not None and stats.visible == 0
