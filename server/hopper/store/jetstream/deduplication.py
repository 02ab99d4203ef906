"""FIFO deduplication windows, one key-value entry per deduplication id.

A FIFO send goes to its queue's backlog like a plain one (its stream sequence is its
sequence number); its deduplication id is an entry of the `<prefix>_dedup` bucket,
keyed by the queue's incarnation and a digest of the id, holding when it was first sent
and the message that took it. Taking an id is a compare-and-set on that one entry, so
two concurrent sends of one id enqueue one message, and the window is decided by
hopper's `now` (300 seconds from the first send, even after the message is deleted),
which JetStream's own Nats-Msg-Id window (the server's clock, fixed per stream) is not.

A round of sends (`sends.FifoSends`: the sends to one queue that arrived together) takes
its ids (each entry naming the round), publishes, then records where its messages went
in one entry for the whole round (`<incarnation>.s.<round>`): ten ids cost eleven
writes, not twenty, and sixteen single sends seventeen writes and one publish. A
duplicate that finds an id whose send has not recorded yet waits for it; an id left so
longer than CLAIM_SECONDS (its sender died between the writes) is free again, so a
client's retry of that send is enqueued rather than called a duplicate of nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from hopper.core import limits
from hopper.core.errors import StoreUnavailable
from hopper.core.model import SendResult
from hopper.store.jetstream import edge
from hopper.store.jetstream.records import MAX_ROUNDS

# How long a taken id may wait for its sequence before it counts as abandoned.
CLAIM_SECONDS = 5.0


@dataclass
class Taken:
    """An id this send took: its entry's key and revision (to free it, should the send
    fail before publishing)."""

    key: str
    revision: int


class Windows:
    def __init__(self, res: edge.Resources) -> None:
        self._res = res
        self._kv = res.dedup

    def _key(self, incarnation: str, window_key: str) -> str:
        return f"{incarnation}.{hashlib.sha256(window_key.encode()).hexdigest()[:40]}"

    async def take(
        self, incarnation: str, ids: Sequence[tuple[str, str, float]], send: str
    ) -> list[Taken | SendResult]:
        """Take each (window key, message id, its send's now) for the round of sends
        named `send`: Taken, or the original's result (a duplicate). Most ids are new:
        all are created at once first, and only those that exist are read (together: one
        whose sender is publishing may keep its reader waiting)."""
        keys = [self._key(incarnation, window_key) for window_key, _, _ in ids]
        claims = [orjson.dumps({"at": now, "id": mid, "send": send}) for _, mid, now in ids]
        created = await edge.create_many(self._kv, list(zip(keys, claims, strict=True)))
        held = [
            self._take_held(incarnation, key, claim, now)
            for key, claim, (_, _, now), revision in zip(keys, claims, ids, created, strict=True)
            if revision is None
        ]
        found = iter(await asyncio.gather(*held, return_exceptions=True))
        outcomes = [
            Taken(key, revision) if revision is not None else next(found)
            for key, revision in zip(keys, created, strict=True)
        ]
        failed = [one for one in outcomes if isinstance(one, BaseException)]
        if failed:
            # Free what the round took: its sends are refused, and their retries must
            # not wait CLAIM_SECONDS for ids nobody holds.
            await self.release([one for one in outcomes if isinstance(one, Taken)])
            raise failed[0]
        return [one for one in outcomes if not isinstance(one, BaseException)]

    async def _take_held(
        self, incarnation: str, key: str, claim: bytes, now: float
    ) -> Taken | SendResult:
        """Take an id whose entry exists: a duplicate while its window lasts."""
        waited_since = time.monotonic()
        for _ in range(MAX_ROUNDS * 8):
            raw, revision = await edge.get(self._kv, key)
            held = None if raw is None else orjson.loads(raw)
            if held is not None and now - held["at"] < limits.DEDUPLICATION_WINDOW_SECONDS:
                seq = await self._sequence(incarnation, held)
                if seq is not None:
                    return SendResult(held["id"], sequence_number=seq, duplicate=True)
                if time.monotonic() - waited_since < CLAIM_SECONDS:
                    await asyncio.sleep(0.005)  # its sender is publishing: its sequence comes
                    continue
            try:
                return Taken(key, await edge.put(self._kv, key, claim, revision))
            except edge.Conflict:
                continue
        raise StoreUnavailable("JetStream: too much contention on a deduplication id")

    async def _sequence(self, incarnation: str, held: dict[str, Any]) -> int | None:
        """The sequence number of the message holding an id, once its send recorded it."""
        raw, _ = await edge.get(self._kv, f"{incarnation}.s.{held['send']}")
        found = None if raw is None else orjson.loads(raw).get(held["id"])
        return None if found is None else int(found)

    async def record(self, incarnation: str, send: str, sequences: dict[str, int]) -> None:
        """Where the messages of the round named `send` are (message id -> sequence
        number): one entry for the whole round, which its ids' entries name. Not waited
        for: the messages are committed already, and were this write lost (the
        connection lost in between) a duplicate would wait CLAIM_SECONDS and then be
        enqueued, at-least-once."""
        key = f"{incarnation}.s.{send}"
        with contextlib.suppress(StoreUnavailable):
            await edge.put_unacknowledged(self._kv, key, orjson.dumps(sequences), 0)

    async def release(self, taken: Sequence[Taken]) -> None:
        """Free ids whose send failed before publishing (best effort)."""
        for one in taken:
            with contextlib.suppress(edge.Conflict, StoreUnavailable):
                await edge.remove(self._kv, one.key, one.revision)

    async def forget(self, incarnation: str) -> None:
        """Drop every id of the queue (a purge: its window goes with its messages)."""
        with edge.translated():
            await self._res.js.purge_stream(
                f"KV_{self._kv.name}", subject=f"$KV.{self._kv.name}.{incarnation}.>"
            )
