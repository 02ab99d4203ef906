"""The in-memory store's packed messages (store/ledger/shelf.py) answer exactly as
records do. A store-only test: tests/contract/ pins the rules on every store; this one
runs random scripts of sends (packed ids, ids counting back, ids of another form,
messages with attributes or a tenant), receives, visibility changes, deletes, dead
letters (to another queue and to the queue itself), moves, purges, sweeps, discards,
peeks, counts and retention expiry twice on standard queues, once packing and once
keeping every message a record, and asks for the same answers, tokens and deadlines
included."""

from __future__ import annotations

import asyncio
from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from hopper.core.model import (
    MessageAttribute,
    NewMessage,
    QueueKey,
)
from hopper.store.ledger import rules

from .scripts import ACCOUNT, StoreScript

OTHER = QueueKey(ACCOUNT, "a")  # dead-letters into DEAD
SELF = QueueKey(ACCOUNT, "s")  # its own dead-letter queue
DEAD = QueueKey(ACCOUNT, "d")
QUEUES = [OTHER, SELF, DEAD]
PREFIX = "0f1e2d3c-4b5a-4697-8887-"  # as core/ids.py's new_id makes them
KINDS = ["packed", "packed", "packed", "late", "other", "attributes", "tenant"]

sends = st.tuples(
    st.just("send"), st.integers(0, 2), st.sampled_from(KINDS), st.sampled_from([0, 0, 0, 3])
)
receives = st.tuples(
    st.just("receive"), st.integers(0, 2), st.integers(1, 10), st.sampled_from([0, 2, 30])
)
operations = st.one_of(
    sends,
    sends,
    sends,
    receives,
    receives,
    st.tuples(st.just("change"), st.integers(0, 30), st.sampled_from([0, 0, 10])),
    st.tuples(st.just("delete"), st.integers(0, 30)),
    st.tuples(st.just("advance"), st.sampled_from([0.5, 2, 10, 45])),
    st.tuples(st.just("move"), st.booleans(), st.integers(1, 5)),
    st.tuples(st.just("purge"), st.integers(0, 2)),
    st.tuples(st.just("sweep"), st.integers(1, 3)),
    st.tuples(st.just("discard"), st.integers(0, 2), st.integers(0, 60)),
    st.tuples(st.just("look"), st.integers(0, 2)),
)


class Script(StoreScript):
    def __init__(self) -> None:
        super().__init__(QUEUES, fifo=False)
        self.ids: list[str] = []

    async def run(self, ops: list[tuple[Any, ...]]) -> list[Any]:
        await self.setup()
        for op in ops:
            self.trace.append(await getattr(self, op[0])(*op[1:]))
        for queue in range(len(QUEUES)):
            self.trace.append(await self.look(queue))
        return self.trace

    def _id(self, kind: str) -> str:
        n = len(self.ids)
        if kind == "other":
            return f"other-{n}"
        # Even counts go up; an odd one counts back below the last (a packed queue keeps
        # it as a record).
        return f"{PREFIX}{2 * n - 1 if kind == 'late' else 2 * n + 2:012x}"

    async def send(self, queue: int, kind: str, delay: int) -> Any:
        mid = self._id(kind)
        self.ids.append(mid)
        extra: dict[str, Any] = {}
        if kind == "attributes":
            extra["attributes"] = {"n": MessageAttribute("String", string_value=mid)}
        if kind == "tenant":
            extra["group_id"] = f"t{len(self.ids) % 2}"
        new = NewMessage(mid, f"body {mid}", delay=delay, **extra)
        return await self.store.send(QUEUES[queue], [new], now=None)

    async def receive(self, queue: int, n: int, lease: int) -> Any:
        key = QUEUES[queue]
        got = await self.store.receive(key, max_messages=n, visibility_timeout=lease, now=None)
        self.held += [(key, d.receipt) for d in got]
        return [(d.message, d.token, d.receive_count, d.visible_at) for d in got]

    async def sweep(self, limit: int) -> Any:
        return await self.store.sweep_expired(limit=limit, now=None)

    async def discard(self, queue: int, n: int) -> Any:
        if not self.ids:
            return None
        mid = self.ids[n % len(self.ids)]
        return await self.store.discard(QUEUES[queue], mid, now=None)

    async def look(self, queue: int) -> Any:
        key = QUEUES[queue]
        peeked = await self.store.peek(key, limit=1000, now=None)
        return [
            await self.store.stats(key, now=None),
            await self.store.count_in_flight(key, now=None),
            await self.store.next_visible_at(key, now=None),
            [(p.message, p.visible_at, p.receive_count, p.token) for p in peeked],
        ]


def trace(ops: list[tuple[Any, ...]]) -> list[Any]:
    return asyncio.run(Script().run(ops))


@settings(max_examples=300, deadline=None)
@given(st.lists(operations, min_size=20, max_size=120))
def test_packed_messages_answer_as_records(ops: list[tuple[Any, ...]]) -> None:
    packed = trace(ops)
    with mock.patch.object(rules, "_bare", lambda message: False):
        kept = trace(ops)
    assert packed == kept


def test_a_drained_queue_keeps_no_slots_for_its_deleted_messages() -> None:
    # Given 1,000 packed messages, when 990 are received and deleted ten at a time,
    # then the shelf holds slots for few more than the ten left (its head was cut),
    # and the ten are found by id.
    async def scenario() -> tuple[int, list[str]]:
        script = Script()
        await script.setup()
        for _ in range(1000):
            await script.send(0, "packed", 0)
        for _ in range(99):
            await script.receive(0, 10, 30)
            while script.held:
                await script.delete(0)
        shelf = script.store.ledger(OTHER).messages
        left = [mid for mid in script.ids[-10:] if shelf.get(mid) is not None]
        return len(shelf._slots), left  # noqa: SLF001 - what the cut is for

    slots, left = asyncio.run(scenario())
    assert slots < 100
    assert len(left) == 10
