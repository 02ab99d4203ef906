"""The PostgreSQL store's dispatch slots (QueueStore.take_dispatch_slot): a row per
slot in `dispatch_slots`, taken and renewed by one guarded upsert (queries.sql)."""

from __future__ import annotations

from collections.abc import Mapping

import asyncpg

from hopper.core.model import QueueKey
from hopper.store.postgres.failures import translated


class DispatchSlotStatements:
    _sql: Mapping[str, str]

    @property
    def _db(self) -> asyncpg.Pool:
        raise NotImplementedError  # PostgresQueueStore's pool

    async def take_dispatch_slot(
        self, key: QueueKey, *, holder: str, slots: int, lease: float, now: float | None
    ) -> int | None:
        with translated(key):
            slot: int | None = await self._db.fetchval(
                self._sql["take_dispatch_slot"], key.account, key.name, now, holder, slots, lease
            )
        return slot

    async def give_back_dispatch_slot(self, key: QueueKey, *, holder: str, slot: int) -> None:
        with translated(key):
            await self._db.execute(
                self._sql["give_back_dispatch_slot"], key.account, key.name, holder, slot
            )
