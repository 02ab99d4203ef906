"""The JetStream store's declared limit: a queue's state is one key-value entry, so a
queue holds at most `max_queue_depth` messages (10,000 by default); a send beyond it is
refused with OverLimit naming the store, never half-applied nor silently dropped.

JetStream-only: the other stores have no such limit (the README's feature table).
"""

from __future__ import annotations

import uuid

import pytest

from hopper.core.clock import FakeClock
from hopper.core.errors import OverLimit
from hopper.core.model import NewMessage, QueueConfig, QueueKey
from hopper.store.jetstream import JetStreamQueueStore

from .servers import one_node
from .stores import drop_prefix


def message(body: str) -> NewMessage:
    return NewMessage(id=str(uuid.uuid4()), body=body)


async def test_a_send_past_the_ledgers_limit_is_refused_naming_the_store() -> None:
    clock = FakeClock()
    prefix = f"t{uuid.uuid4().hex[:12]}"
    store = JetStreamQueueStore([one_node().url], prefix=prefix, clock=clock, max_queue_depth=3)
    await store.start(lambda key, count: None)
    try:
        key = QueueKey("000000000000", "small")
        await store.create_queue(key, QueueConfig(), {}, now=clock.now())
        await store.send(key, [message("a"), message("b")], now=clock.now())

        with pytest.raises(OverLimit, match="JetStream store") as refused:
            await store.send(key, [message("c"), message("d")], now=clock.now())

        assert "holds 3 messages" in refused.value.reason
        stats = await store.stats(key, now=clock.now())
        assert stats.visible == 2  # nothing of the refused batch went in
        await store.send(key, [message("c")], now=clock.now())  # up to the limit is fine
        assert (await store.stats(key, now=clock.now())).visible == 3
    finally:
        await store.close()
        await drop_prefix(one_node().url, prefix)
