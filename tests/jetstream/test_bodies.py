"""The JetStream store's bodies: what a drain reads is in the cache when its receive
fills it in, and what it deleted leaves the stream. JetStream-only: the cache and the
backlog are this store's own (the contract suite says what every store answers; this
says what keeps a drain from reading bodies one by one, and a drained queue quiet).
"""

from __future__ import annotations

import uuid

from hopper.core.clock import FakeClock
from hopper.core.model import NewMessage, QueueConfig, QueueKey, Receipt
from hopper.store.jetstream import codec

from .stores import jetstream_store

KEY = QueueKey("000000000000", "bodies")


async def test_a_body_read_back_brings_the_other_bodies_of_its_entry() -> None:
    clock = FakeClock()
    async with jetstream_store(clock) as store:
        await store.create_queue(KEY, QueueConfig(), {}, now=clock.now())
        sent = [NewMessage(id=str(uuid.uuid4()), body=f"b{i}") for i in range(10)]
        await store.send(KEY, sent, now=clock.now())
        # The batch is one backlog entry; its bodies leave the cache (as later sends
        # push them out), and one is read back.
        bodies = store._p.bodies
        cached = dict(bodies._cache)
        assert len({codec.key_seq(key) for key in cached}) == 1
        bodies._cache.clear()

        await bodies.get(min(cached))

        assert bodies._cache == cached


async def test_a_body_kept_again_is_the_last_to_leave_the_cache() -> None:
    clock = FakeClock()
    async with jetstream_store(clock) as store:
        bodies = store._p.bodies
        bodies.keep(1, ("first", {}, None))
        bodies.keep(2, ("second", {}, None))

        bodies.keep(1, ("first", {}, None))  # a backlog read of a body sent here

        assert list(bodies._cache) == [2, 1]


async def test_a_drained_queue_leaves_no_backlog_entry_behind() -> None:
    """Freed entries are purged in batches while the ledger still names some; the
    delete that empties it purges the rest (quiet.py counts an empty queue's backlog
    as empty only then)."""
    clock = FakeClock()
    async with jetstream_store(clock) as store:
        await store.create_queue(KEY, QueueConfig(), {}, now=clock.now())
        for _ in range(3):
            batch = [NewMessage(id=str(uuid.uuid4()), body="x") for _ in range(10)]
            await store.send(KEY, batch, now=clock.now())
        while got := await store.receive(
            KEY, max_messages=7, visibility_timeout=30, now=clock.now()
        ):
            receipts = [Receipt(d.message.id, d.token) for d in got]
            await store.delete(KEY, receipts, refuse_expired=False, now=clock.now())
        found = await store._p.records.find(KEY)
        assert found is not None

        left = await store._p.backlog.read(found[1], 0, 100)

        assert left.entries == [] and left.waiting == 0
