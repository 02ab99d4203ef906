"""The topic stores the contract suite runs on, one entry per backend: each yields a
started, empty TopicStore."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any

import nats
import pytest

from hopper.sns.store import TopicStore
from hopper.store.jetstream.topics import JetStreamTopicStore
from hopper.store.memory.topics import MemoryTopicStore
from hopper.store.postgres.topics import PostgresTopicStore
from tests.jetstream.servers import one_node
from tests.postgres.databases import SCHEMA, fresh_database


@asynccontextmanager
async def memory_topics() -> AsyncIterator[TopicStore]:
    yield MemoryTopicStore()


@asynccontextmanager
async def postgres_topics() -> AsyncIterator[TopicStore]:
    async with fresh_database() as dsn:
        store = PostgresTopicStore(dsn, schema=SCHEMA, max_size=2)
        await store.start()
        try:
            yield store
        finally:
            await store.close()


@asynccontextmanager
async def jetstream_topics() -> AsyncIterator[TopicStore]:
    node = one_node()
    prefix = f"t{uuid.uuid4().hex[:12]}"
    store = JetStreamTopicStore([node.url], prefix=prefix)
    await store.start()
    try:
        yield store
    finally:
        await store.close()
        nc = await nats.connect(node.url)
        with suppress(nats.js.errors.NotFoundError):
            await nc.jetstream().delete_stream(f"KV_{prefix}_topics")
        await nc.close()


TOPIC_STORES: list[Any] = [
    pytest.param(memory_topics, id="memory"),
    pytest.param(postgres_topics, id="postgres"),
    pytest.param(jetstream_topics, id="jetstream"),
]
