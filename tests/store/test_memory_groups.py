"""The in-memory store's FIFO group index gives exactly what the whole-queue walk it
replaced gave. A store-only test: tests/contract/ pins the FIFO rules on every store;
this one runs random scripts of sends, receives, visibility changes, deletes, dead
letters (to another queue and to the queue itself), moves, purges, sweeps, discards and
retention expiry twice, once with the index and once with the old walk, and asks for
the same answers, tokens and deadlines included."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from hopper.core.model import (
    NewMessage,
    QueueKey,
)
from hopper.store.ledger import Message, Queue
from hopper.store.ledger import rules as memory

from .scripts import ACCOUNT, StoreScript

OTHER = QueueKey(ACCOUNT, "a.fifo")  # dead-letters into DEAD
SELF = QueueKey(ACCOUNT, "s.fifo")  # its own dead-letter queue
DEAD = QueueKey(ACCOUNT, "d.fifo")
QUEUES = [OTHER, SELF, DEAD]


def walked_runs(queue: Queue, now: float, skip: frozenset[str] | set[str]) -> Iterator[Message]:
    """The walk the index replaced: the whole queue, each group's run, groups ordered by
    their run's first message (a stable sort keeps the queue's order for ties)."""
    runs: dict[str | None, list[Message]] = {}
    closed: set[str | None] = set()
    for message in queue.live(now).values():
        group = message.stored.group_id
        if group in closed or message.stored.id in skip:
            continue
        if message.visible_at > now:
            closed.add(group)
            continue
        runs.setdefault(group, []).append(message)
    ordered = sorted(runs.values(), key=lambda run: run[0].visible_at)
    return iter([message for run in ordered for message in run])


def walked_send_order(queue: Queue, now: float) -> Iterator[Message]:
    chosen = {m.stored.id for m in walked_runs(queue, now, frozenset())}
    return iter([m for m in queue.messages.values() if m.stored.id in chosen])


sends = st.tuples(
    st.just("send"), st.integers(0, 2), st.integers(0, 3), st.sampled_from([0, 0, 0, 3])
)
receives = st.tuples(
    st.just("receive"), st.integers(0, 2), st.integers(1, 10), st.sampled_from([0, 2, 30])
)
changes = st.tuples(st.just("change"), st.integers(0, 30), st.sampled_from([0, 0, 10]))
deletes = st.tuples(st.just("delete"), st.integers(0, 30))
# Weighted towards what makes runs: sends, receives, released and deleted leases.
operations = st.one_of(
    sends,
    sends,
    sends,
    receives,
    receives,
    changes,
    changes,
    deletes,
    st.tuples(st.just("advance"), st.sampled_from([0.5, 2, 10, 45])),
    st.tuples(st.just("move"), st.booleans(), st.integers(1, 5)),
    st.tuples(st.just("purge"), st.integers(0, 2)),
    st.tuples(st.just("sweep"), st.integers(1, 3)),
    st.tuples(st.just("discard"), st.integers(0, 2), st.integers(0, 60)),
)


class Script(StoreScript):
    def __init__(self) -> None:
        super().__init__(QUEUES, fifo=True)
        self.sent = 0

    async def run(self, ops: list[tuple[Any, ...]]) -> list[Any]:
        await self.setup()
        for op in ops:
            self.trace.append(await getattr(self, op[0])(*op[1:]))
        for key in QUEUES:
            self.trace.append(await self.store.stats(key, now=None))
            peeked = await self.store.peek(key, limit=1000, now=None)
            self.trace.append([(p.message.id, p.visible_at, p.receive_count) for p in peeked])
        return self.trace

    async def send(self, queue: int, group: int, delay: int) -> Any:
        self.sent += 1
        mid = f"m{self.sent}"
        new = NewMessage(mid, mid, delay=delay, group_id=f"g{group}", deduplication_id=mid)
        return await self.store.send(QUEUES[queue], [new], now=None)

    async def receive(self, queue: int, n: int, lease: int) -> Any:
        key = QUEUES[queue]
        got = await self.store.receive(key, max_messages=n, visibility_timeout=lease, now=None)
        self.held += [(key, d.receipt) for d in got]
        return [(d.message.id, d.token, d.receive_count, d.visible_at) for d in got]

    async def sweep(self, limit: int) -> Any:
        # Its count is left out: the old walk dropped every expired message of a FIFO
        # queue at each receive, the index drops those it meets.
        await self.store.sweep_expired(limit=limit, now=None)

    async def discard(self, queue: int, n: int) -> Any:
        return await self.store.discard(QUEUES[queue], f"m{n}", now=None)


def trace(ops: list[tuple[Any, ...]]) -> list[Any]:
    return asyncio.run(Script().run(ops))


@settings(max_examples=300, deadline=None)
@given(st.lists(operations, min_size=20, max_size=120))
def test_the_group_index_answers_as_the_whole_queue_walk(ops: list[tuple[Any, ...]]) -> None:
    indexed = trace(ops)
    with (
        mock.patch.object(memory, "fifo_runs", walked_runs),
        mock.patch.object(memory, "in_send_order", walked_send_order),
    ):
        walked = trace(ops)
    assert indexed == walked


def test_a_long_group_drops_its_delivered_head_entries() -> None:
    # Given one group of 200 messages, when 100 are received and deleted ten at a time,
    # then its index holds the 100 left: the dropped entries went, not only past them.
    async def scenario() -> list[Message]:
        script = Script()
        await script.setup()
        for _ in range(200):
            await script.send(0, 0, 0)
        for _ in range(10):
            await script.receive(0, 10, 30)
            while script.held:
                await script.delete(0)
        await script.receive(0, 1, 0)  # a walk drops the stale head entries
        return script.store.ledger(OTHER).index()["g0"].messages

    held = asyncio.run(scenario())
    assert [m.stored.id for m in held] == [f"m{n}" for n in range(101, 201)]
