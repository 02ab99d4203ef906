"""The PostgreSQL store's message move tasks: one row each in `move_tasks`, changed by
the guarded statements of queries.sql (`cancel_move_task`, `advance_move_task`,
`claim_move_tasks`), which apply core/move_tasks.py's rules in one statement each."""

from __future__ import annotations

from collections.abc import Mapping

import asyncpg

from hopper.core.model import MoveTask, MoveTaskStatus, QueueKey
from hopper.store.postgres.failures import translated
from hopper.store.postgres.rows import move_task


class MoveTaskStatements:
    _sql: Mapping[str, str]

    @property
    def _db(self) -> asyncpg.Pool:
        raise NotImplementedError  # PostgresQueueStore's pool

    async def create_move_task(self, task: MoveTask) -> bool:
        destination = task.destination
        with translated():
            created = await self._db.fetchval(
                self._sql["create_move_task"],
                task.id,
                task.source.account,
                task.source.name,
                None if destination is None else destination.account,
                None if destination is None else destination.name,
                task.max_per_second,
                task.status.value,
                task.started_at,
                task.to_move,
                task.moved,
                task.failure_reason,
                task.lease_until,
            )
        return created is not None

    async def get_move_task(self, task_id: str) -> MoveTask | None:
        with translated():
            row = await self._db.fetchrow(self._sql["get_move_task"], task_id)
        return None if row is None else move_task(row)

    async def list_move_tasks(self, source: QueueKey, *, limit: int) -> list[MoveTask]:
        with translated():
            rows = await self._db.fetch(
                self._sql["list_move_tasks"], source.account, source.name, limit
            )
        return [move_task(row) for row in rows]

    async def cancel_move_task(self, task_id: str) -> MoveTask | None:
        with translated():
            row = await self._db.fetchrow(self._sql["cancel_move_task"], task_id)
        return None if row is None else move_task(row)

    async def advance_move_task(
        self,
        task_id: str,
        *,
        moved: int,
        lease_until: float,
        finish: MoveTaskStatus | None = None,
        failure_reason: str | None = None,
    ) -> MoveTask | None:
        with translated():
            row = await self._db.fetchrow(
                self._sql["advance_move_task"],
                task_id,
                moved,
                lease_until,
                None if finish is None else finish.value,
                failure_reason,
            )
        return None if row is None else move_task(row)

    async def claim_move_tasks(self, *, lease_until: float, now: float | None) -> list[MoveTask]:
        with translated():
            rows = await self._db.fetch(self._sql["claim_move_tasks"], lease_until, now)
        return [move_task(row) for row in rows]
