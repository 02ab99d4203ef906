"""The stores the contract suite runs on: ONE list, one entry per backend.

Each entry is an async context-manager factory taking the test's clock and yielding a
started, empty store. Add a backend by appending a `pytest.param(factory, id=...)`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import pytest

from hopper.core.clock import Clock
from hopper.core.model import QueueKey
from hopper.core.store import QueueStore
from hopper.store.memory import MemoryQueueStore
from tests.jetstream.stores import jetstream_store
from tests.postgres.stores import postgres_store

StoreFactory = Callable[[Clock], AbstractAsyncContextManager[QueueStore]]


def _ignore(key: QueueKey) -> None:
    pass


@asynccontextmanager
async def memory_store(clock: Clock) -> AsyncIterator[QueueStore]:
    store = MemoryQueueStore(clock)
    await store.start(_ignore)
    try:
        yield store
    finally:
        await store.close()


STORES: list[Any] = [
    pytest.param(memory_store, id="memory"),
    pytest.param(postgres_store, id="postgres"),
    pytest.param(jetstream_store, id="jetstream"),
]
