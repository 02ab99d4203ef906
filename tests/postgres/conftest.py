"""Fixtures for the Postgres-only tests: a fresh database per test, and started stores."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import pytest

from hopper.core.model import QueueKey
from hopper.store.postgres import PostgresQueueStore

from .databases import SCHEMA, fresh_database

StoreOpener = Callable[..., AbstractAsyncContextManager[PostgresQueueStore]]


@pytest.fixture
async def database() -> AsyncIterator[str]:
    """The DSN of a new database with hopper's schema, dropped after the test."""
    async with fresh_database() as dsn:
        yield dsn


class Wakes:
    """A `wake` callback that remembers what it was told, for tests to await."""

    def __init__(self) -> None:
        self.keys: asyncio.Queue[QueueKey] = asyncio.Queue()
        self.counts: list[int | None] = []  # each wake-up's count, in order

    def __call__(self, key: QueueKey, count: int | None = None) -> None:
        self.counts.append(count)
        self.keys.put_nowait(key)

    async def next(self, timeout: float = 5.0) -> QueueKey:
        async with asyncio.timeout(timeout):
            return await self.keys.get()

    def clear(self) -> None:
        while not self.keys.empty():
            self.keys.get_nowait()


@pytest.fixture
def open_store(database: str) -> StoreOpener:
    """Open a started store over the test's database (call it twice for two "processes")."""

    @asynccontextmanager
    async def opener(
        wake: Wakes | None = None, **options: object
    ) -> AsyncIterator[PostgresQueueStore]:
        store = PostgresQueueStore(database, schema=SCHEMA, **options)  # type: ignore[arg-type]
        await store.start(wake or Wakes())
        try:
            yield store
        finally:
            await store.close()

    return opener
