"""The PostgreSQL store's queues: one row each in `queues`, created, read, listed,
changed and deleted by the statements of queries.sql of the same names. Look-ups of
different queues' rows share a statement (`get_queues`, through the store's coalescer),
since the core reads a queue's record at most once a second (core/recent.py) and
requests spread over many queues each need one."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import asyncpg

from hopper.core.model import QueueConfig, QueueKey, QueueRecord
from hopper.store.postgres.coalesce import Coalescer
from hopper.store.postgres.failures import translated
from hopper.store.postgres.rows import config_json, found, record
from hopper.store.postgres.schema import Connectable


class QueueStatements:
    _sql: Mapping[str, str]
    _coalesce: bool
    _lookups: Coalescer[None, QueueKey, asyncpg.Record | None]
    # what the store learnt of each queue (PostgresQueueStore), forgotten with it
    _grouped: dict[QueueKey, bool]
    _probes_due: dict[QueueKey, int]
    _singles_due: Counter[QueueKey]
    _dead_lettered: Counter[QueueKey]

    @property
    def _db(self) -> asyncpg.Pool:
        raise NotImplementedError  # PostgresQueueStore's pool

    @property
    def _on(self) -> Connectable | asyncpg.Pool:
        raise NotImplementedError  # PostgresQueueStore's pool or the caller's connection

    async def create_queue(
        self,
        key: QueueKey,
        config: QueueConfig,
        tags: Mapping[str, str],
        *,
        now: float | None,
    ) -> tuple[QueueRecord, bool]:
        with translated(key):
            while True:
                row = await self._db.fetchrow(
                    self._sql["create_queue"],
                    key.account,
                    key.name,
                    now,
                    config_json(config),
                    dict(tags),
                )
                # No row: a concurrent create committed after our snapshot; look again.
                if row is not None:
                    return record(row), bool(row["created"])

    async def get_queue(self, key: QueueKey) -> QueueRecord | None:
        with translated(key):
            if self._coalesce:
                [row] = await self._lookups.submit(None, [key])
            else:
                row = await self._on.fetchrow(self._sql["get_queue"], key.account, key.name)
        return None if row is None else record(row)

    async def _get_queues(self, _: None, keys: list[QueueKey]) -> list[asyncpg.Record | None]:
        rows = await self._db.fetch(
            self._sql["get_queues"], [key.account for key in keys], [key.name for key in keys]
        )
        found = {(row["account"], row["name"]): row for row in rows}
        return [found.get((key.account, key.name)) for key in keys]

    async def list_queues(
        self, account: str, *, prefix: str = "", after: str | None = None, limit: int = 1000
    ) -> list[QueueRecord]:
        with translated():
            rows = await self._db.fetch(self._sql["list_queues"], account, prefix, after, limit)
        return [record(row) for row in rows]

    async def update_queue(
        self, key: QueueKey, config: QueueConfig, *, now: float | None
    ) -> QueueRecord:
        with translated(key):
            row = await self._db.fetchrow(
                self._sql["update_queue"], key.account, key.name, now, config_json(config)
            )
        return record(found(row, key))

    async def delete_queue(self, key: QueueKey, *, now: float | None) -> float | None:
        with translated(key):
            deleted_at: float | None = await self._db.fetchval(
                self._sql["delete_queue"], key.account, key.name, now
            )
        # What this process learnt of the queue goes with it.
        for known in (self._grouped, self._probes_due, self._singles_due, self._dead_lettered):
            known.pop(key, None)
        return deleted_at

    async def last_deleted_at(self, key: QueueKey) -> float | None:
        with translated(key):
            deleted_at: float | None = await self._db.fetchval(
                self._sql["last_deleted_at"], key.account, key.name
            )
        return deleted_at

    async def set_tags(
        self, key: QueueKey, *, add: Mapping[str, str], remove: Sequence[str]
    ) -> QueueRecord:
        with translated(key):
            row = await self._db.fetchrow(
                self._sql["set_tags"], key.account, key.name, dict(add), list(remove)
            )
        return record(found(row, key))

    async def dead_letter_sources(self, target: QueueKey) -> list[QueueKey]:
        with translated(target):
            rows = await self._db.fetch(
                self._sql["dead_letter_sources"], target.account, target.name
            )
        return [QueueKey(row["account"], row["name"]) for row in rows]
