"""The contract suite's Postgres factory: a started store over an empty database (a
clone of the migrated template, or one an earlier test used, emptied: databases.py).

The store ignores the test's clock: contract tests pass `now=clock.now()` to every
call, so the SQL runs on the fake time and never consults the database clock.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from hopper.core.clock import Clock
from hopper.core.model import QueueKey
from hopper.core.store import QueueStore
from hopper.store.postgres import PostgresQueueStore

from .databases import SCHEMA, reused_database


def _ignore(key: QueueKey) -> None:
    pass


@asynccontextmanager
async def postgres_store(clock: Clock) -> AsyncIterator[QueueStore]:
    async with reused_database() as dsn:
        store = PostgresQueueStore(dsn, schema=SCHEMA, min_size=1, max_size=4, listen=False)
        await store.start(_ignore)
        try:
            yield store
        finally:
            await store.close()
