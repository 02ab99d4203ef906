"""Message bodies in their stream: published once, read by sequence (and cached, since a
body never changes), deleted with their message."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence

from hopper.core.errors import StoreUnavailable
from hopper.core.model import StoredMessage
from hopper.store.jetstream import codec, edge

log = logging.getLogger("hopper.jetstream")

# Bodies kept in process memory (any process may cache them: they never change).
CACHE_SIZE = 20_000

Body = codec.Body


class Bodies:
    def __init__(self, res: edge.Resources) -> None:
        self._res = res
        self._cache: OrderedDict[int, Body] = OrderedDict()

    async def publish(self, stored: Sequence[StoredMessage]) -> dict[str, int]:
        """Publish each message's body; message id -> body key (codec.body_key)."""
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
            key = codec.body_key(ack.seq)
            self.keep(key, (message.body, message.attributes, message.trace_header))
            return message.id, key

        return dict(await asyncio.gather(*(one(m) for m in stored)))

    def keep(self, key: int, body: Body) -> None:
        self._cache[key] = body
        # Kept again (a backlog read of a body sent here) is kept as new: left where
        # its send put it, a body read ahead was the next to go, before its receive
        # filled it in (500 of a second 40,000-message drain were read back one by one).
        self._cache.move_to_end(key)
        if len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)

    async def get(self, key: int) -> Body:
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        res = self._res
        seq = codec.key_seq(key)
        with edge.translated():
            raw = await res.js.get_msg(res.body_stream, seq)
        # Every body of a backlog entry is kept: its other messages were likely sent
        # together and are received together (a sweep takes 500 of a queue's oldest
        # into its ledger, whose bodies later sends may push out of the cache; they
        # were then read back one request each).
        bodies = codec.decode_bodies(raw.data or b"{}")
        for index, body in enumerate(bodies):
            self.keep(codec.body_key(seq, index), body)
        return bodies[key % codec.SLOTS]

    async def republish(self, key: int) -> int:
        """The body of `key` published again, alone, on the bodies subject; its new key."""
        body, attributes, trace = await self.get(key)
        stored = StoredMessage("", body, attributes, trace, sent_at=0.0)
        res = self._res
        with edge.translated():
            ack = await res.js.publish(
                res.body_subject, codec.encode_body(stored), stream=res.body_stream
            )
        new = codec.body_key(ack.seq)
        self.keep(new, (body, attributes, trace))
        return new

    def evict(self, keys: Iterable[int]) -> None:
        """Forget these bodies (their stream messages go another way: a backlog trim)."""
        for key in keys:
            self._cache.pop(key, None)

    async def drop(self, keys: Iterable[int]) -> None:
        """Delete the stream messages holding these bodies (best effort): the caller
        knows that no message names any other body of theirs."""
        res = self._res
        keys = list(keys)
        self.evict(keys)

        async def one(seq: int) -> None:
            try:
                await edge.delete_message(res, seq)
            except StoreUnavailable as error:
                # An orphaned body costs space until the stream's max age, never a message.
                log.debug("hopper: body %s not deleted: %s", seq, error)

        # Together: a batch's deletes cost one round trip, not one each.
        await asyncio.gather(*(one(seq) for seq in {codec.key_seq(k) for k in keys}))

    async def fill(
        self, messages: Iterable[StoredMessage], bodies: Mapping[str, int]
    ) -> list[StoredMessage]:
        """`filled` of each message; a body this process holds costs no await."""
        cache = self._cache
        filled = []
        for stored in messages:
            key = bodies.get(stored.id)
            if key is None:
                filled.append(stored)
                continue
            body = cache.get(key)
            filled.append(codec.with_body(stored, body or await self.get(key)))
        return filled

    async def filled(self, stored: StoredMessage, bodies: Mapping[str, int]) -> StoredMessage:
        """`stored` with its body, attributes and trace header (a ledger holds none)."""
        key = bodies.get(stored.id)
        if key is None:
            return stored
        body, attributes, trace = await self.get(key)
        return dataclasses.replace(stored, body=body, attributes=attributes, trace_header=trace)
