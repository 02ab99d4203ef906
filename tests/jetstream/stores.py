"""The contract suite's JetStream factory: a started store with its own prefix (its own
stream and buckets) on the session's nats-server, removed afterwards.

The store ignores the test's clock as the Postgres store does: contract tests pass
`now=clock.now()` to every call.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress

import nats

from hopper.core.clock import Clock
from hopper.core.model import QueueKey
from hopper.store.jetstream import JetStreamQueueStore

from .servers import one_node


def _ignore(key: QueueKey, count: int | None = None) -> None:
    pass


async def drop_prefix(url: str, prefix: str) -> None:
    """Delete what a store of `prefix` created, so a long run does not fill the node."""
    nc = await nats.connect(url)
    try:
        js = nc.jetstream()
        for stream in (
            f"{prefix.upper()}_BODIES",
            f"KV_{prefix}_queues",
            f"KV_{prefix}_ledgers",
            f"KV_{prefix}_dedup",
        ):
            with suppress(nats.js.errors.NotFoundError):
                await js.delete_stream(stream)
    finally:
        await nc.close()


@asynccontextmanager
async def jetstream_store(clock: Clock) -> AsyncIterator[JetStreamQueueStore]:
    """A started store of its own prefix on the session's node, removed afterwards."""
    node = one_node()
    prefix = f"t{uuid.uuid4().hex[:12]}"
    store = JetStreamQueueStore([node.url], prefix=prefix, clock=clock)
    await store.start(_ignore)
    try:
        yield store
    finally:
        await store.close()
        await drop_prefix(node.url, prefix)
