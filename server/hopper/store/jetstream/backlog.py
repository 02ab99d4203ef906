"""A queue's backlog: plain sends waiting, in order, on the queue's own subject of the
bodies stream, until a receive takes them into the ledger.

A send to a standard queue that needs no decision (no deduplication id, no lease, no
depth ceiling) is one publish here and writes no ledger: JetStream's acknowledgement is
its commit, and its stream sequence its place in line. A receive that finds too few
messages in the ledger reads the next ones after the ledger's cursor (one batched direct
get) and takes them in by the same compare-and-set that claims them, so two processes
never take one entry twice. What a receive costs therefore depends on the messages in
flight, never on how many wait behind them.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Sequence

import nats.errors
import orjson

from hopper.core.errors import StoreUnavailable
from hopper.core.model import StoredMessage
from hopper.store.jetstream import codec, edge
from hopper.store.jetstream.bodies import Bodies

log = logging.getLogger("hopper.jetstream")

# One read returns at most this many bytes of entries (the server ends the batch early).
READ_MAX_BYTES = 4 * 1024 * 1024


@dataclasses.dataclass(frozen=True)
class Entry:
    """One waiting message: its stream sequence, the message, when it is visible."""

    seq: int
    stored: StoredMessage
    visible_at: float


class Backlog:
    def __init__(self, res: edge.Resources, bodies: Bodies) -> None:
        self._res = res
        self._bodies = bodies

    async def publish(
        self, incarnation: str, messages: Sequence[tuple[StoredMessage, float]]
    ) -> list[int]:
        """Append each (message, visible at) in order; their sequences, once JetStream
        has them all."""
        res = self._res
        subject = res.backlog_subject(incarnation)

        async def one(stored: StoredMessage, visible_at: float) -> int:
            data = codec.encode_entry(stored, visible_at)
            edge.fits(res.js, data)
            with edge.translated():
                ack = await res.js.publish(
                    subject,
                    data,
                    stream=res.body_stream,
                    # A publish the client library retries is stored once.
                    headers={"Nats-Msg-Id": stored.id},
                )
            self._bodies.keep(ack.seq, (stored.body, stored.attributes, stored.trace_header))
            return int(ack.seq)

        # One connection writes them in this order, so their sequences are send order.
        seqs = await asyncio.gather(*(one(stored, at) for stored, at in messages))
        # Long polls of other processes: a hint (they also look by themselves).
        with contextlib.suppress(nats.errors.Error):
            await res.nc.publish(res.wake_subject(incarnation), b"")
        return list(seqs)

    async def read(self, incarnation: str, after: int, limit: int) -> tuple[list[Entry], int]:
        """Up to `limit` entries after sequence `after`, and how many more wait after
        them. One request: a batched direct get (nats-server 2.11)."""
        res = self._res
        request = {
            "seq": after + 1,
            "next_by_subj": res.backlog_subject(incarnation),
            "batch": max(limit, 1),
            "max_bytes": READ_MAX_BYTES,
        }
        entries: list[Entry] = []
        inbox = res.nc.new_inbox()
        with edge.translated():
            sub = await res.nc.subscribe(inbox)
            try:
                await res.nc.publish(
                    f"$JS.API.DIRECT.GET.{res.body_stream}", orjson.dumps(request), reply=inbox
                )
                while True:
                    msg = await sub.next_msg(timeout=edge.REQUEST_TIMEOUT_SECONDS)
                    headers = msg.headers or {}
                    status = headers.get("Status")
                    if status == "404":
                        return entries, 0
                    if status is not None:  # 204: end of the batch
                        if status != "204":
                            raise StoreUnavailable(f"JetStream: direct get answered {status}")
                        return entries, int(headers.get("Nats-Num-Pending", 0))
                    if len(entries) < limit:
                        entries.append(self._entry(msg.data, int(headers["Nats-Sequence"])))
            finally:
                await sub.unsubscribe()

    def _entry(self, data: bytes, seq: int) -> Entry:
        stored, visible_at = codec.decode_entry(data)
        self._bodies.keep(seq, (stored.body, stored.attributes, stored.trace_header))
        return Entry(seq, stored, visible_at)

    async def waiting(self, incarnation: str, after: int) -> int:
        """How many entries wait after sequence `after`."""
        entries, more = await self.read(incarnation, after, 1)
        return len(entries) + more

    async def last(self, incarnation: str) -> int:
        """The sequence of the queue's last entry, or 0."""
        res = self._res
        try:
            with edge.translated():
                msg = await res.js.get_last_msg(res.body_stream, res.backlog_subject(incarnation))
        except StoreUnavailable as error:
            if isinstance(error.__cause__, nats.js.errors.NotFoundError):
                return 0
            raise
        return int(msg.seq or 0)

    async def drop(self, incarnation: str, *, below: int | None = None) -> None:
        """Remove the queue's entries (those before sequence `below`, when given)."""
        res = self._res
        with edge.translated():
            await res.js.purge_stream(
                res.body_stream, subject=res.backlog_subject(incarnation), seq=below
            )
