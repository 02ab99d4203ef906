"""Message bodies in their stream: published once, read by sequence (and cached, since a
body never changes), deleted with their message."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence

from hopper.core.errors import StoreUnavailable
from hopper.core.model import MessageAttribute, StoredMessage
from hopper.store.jetstream import codec, edge

log = logging.getLogger("hopper.jetstream")

# Bodies kept in process memory (any process may cache them: they never change).
CACHE_SIZE = 20_000

Body = tuple[str, Mapping[str, MessageAttribute], str | None]


class Bodies:
    def __init__(self, res: edge.Resources) -> None:
        self._res = res
        self._cache: OrderedDict[int, Body] = OrderedDict()

    async def publish(self, stored: Sequence[StoredMessage]) -> dict[str, int]:
        """Publish each message's body; message id -> stream sequence."""
        res = self._res

        async def one(message: StoredMessage) -> tuple[str, int]:
            with edge.translated():
                ack = await res.js.publish(
                    res.body_subject,
                    codec.encode_body(message),
                    stream=res.body_stream,
                    # JetStream's own dedupe: a publish retried by the client library
                    # stores one body.
                    headers={"Nats-Msg-Id": message.id},
                )
            self.keep(ack.seq, (message.body, message.attributes, message.trace_header))
            return message.id, ack.seq

        return dict(await asyncio.gather(*(one(m) for m in stored)))

    def keep(self, seq: int, body: Body) -> None:
        self._cache[seq] = body
        if len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)

    async def get(self, seq: int) -> Body:
        cached = self._cache.get(seq)
        if cached is not None:
            return cached
        res = self._res
        with edge.translated():
            raw = await res.js.get_msg(res.body_stream, seq)
        body = codec.decode_body(raw.data or b"{}")
        self.keep(seq, body)
        return body

    async def republish(self, seq: int) -> int:
        """The body of sequence `seq` published again on the bodies subject; its new
        sequence."""
        body, attributes, trace = await self.get(seq)
        stored = StoredMessage("", body, attributes, trace, sent_at=0.0)
        res = self._res
        with edge.translated():
            ack = await res.js.publish(
                res.body_subject, codec.encode_body(stored), stream=res.body_stream
            )
        self.keep(ack.seq, (body, attributes, trace))
        return int(ack.seq)

    async def drop(self, seqs: Iterable[int]) -> None:
        """Delete bodies no message names any more (best effort)."""
        res = self._res

        async def one(seq: int) -> None:
            self._cache.pop(seq, None)
            try:
                await edge.delete_message(res, seq)
            except StoreUnavailable as error:
                # An orphaned body costs space until the stream's max age, never a message.
                log.debug("hopper: body %s not deleted: %s", seq, error)

        # Together: a batch's deletes cost one round trip, not one each.
        await asyncio.gather(*(one(seq) for seq in seqs))

    async def filled(self, stored: StoredMessage, bodies: Mapping[str, int]) -> StoredMessage:
        """`stored` with its body, attributes and trace header (a ledger holds none)."""
        seq = bodies.get(stored.id)
        if seq is None:
            return stored
        body, attributes, trace = await self.get(seq)
        return dataclasses.replace(stored, body=body, attributes=attributes, trace_header=trace)
