"""The JetStream store's connection: a server that cannot carry SQS's messages is
refused at start-up in one line, and a connection the server closes is opened again
(nats-py gives such a connection up for good), with `unavailable()` (what `/health`
answers) saying so meanwhile. JetStream-only: the other stores have no connection of
this kind."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import uuid
from pathlib import Path

import pytest

from hopper.core.clock import SystemClock
from hopper.core.errors import StoreUnavailable
from hopper.core.model import NewMessage, QueueConfig, QueueKey
from hopper.store.jetstream import JetStreamQueueStore

from .servers import new_node, one_node
from .stores import drop_prefix


def _ignore(key: QueueKey, count: int | None = None) -> None:
    pass


async def _until(condition, seconds: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    async with asyncio.timeout(seconds):
        while not condition():
            await asyncio.sleep(0.01)


@pytest.mark.slow
async def test_a_server_with_the_default_max_payload_is_refused_naming_it() -> None:
    root = Path(tempfile.mkdtemp(prefix="hopper-nats-"))
    node = new_node("small", root)
    node.max_payload = 1024 * 1024  # nats-server's default
    node.start()
    try:
        store = JetStreamQueueStore([node.url], prefix=f"t{uuid.uuid4().hex[:12]}")
        with pytest.raises(StoreUnavailable, match="max_payload is 1048576 bytes"):
            await store.start(_ignore)
    finally:
        node.stop()
        shutil.rmtree(root, ignore_errors=True)


async def test_a_connection_the_server_closes_is_opened_again_and_the_store_serves() -> None:
    prefix = f"t{uuid.uuid4().hex[:12]}"
    store = JetStreamQueueStore([one_node().url], prefix=prefix, clock=SystemClock())
    await store.start(_ignore)
    key = QueueKey("000000000000", "survivor")
    try:
        await store.create_queue(key, QueueConfig(), {}, now=None)
        assert store.unavailable() is None
        # given a publish over max_payload by its headers (nats-py checks the payload
        # alone): the server answers -ERR and closes the connection
        nc = store._p.res.nc
        await nc.publish("nobody", b"x" * (nc.max_payload - 8), headers={"H": "y" * 64})
        # then the store says it is not serving, and serves again by itself
        await _until(lambda: store.unavailable() is not None)
        await _until(lambda: store.unavailable() is None)
        sent = await store.send(key, [NewMessage(id=str(uuid.uuid4()), body="b")], now=None)
        got = await store.receive(key, max_messages=1, visibility_timeout=30, now=None)
        assert [d.message.id for d in got] == [sent[0].message_id]
    finally:
        await store.close()
        await drop_prefix(one_node().url, prefix)
