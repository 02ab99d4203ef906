"""The in-memory store's message move tasks: a dict of task records, changed by the
rules core/move_tasks.py states (the JetStream store runs these on its task bucket's
contents too)."""

from __future__ import annotations

import dataclasses
from collections.abc import MutableMapping

from hopper.core import move_tasks
from hopper.core.clock import Clock
from hopper.core.model import MoveTask, MoveTaskStatus, QueueKey


class MoveTaskRecords:
    _clock: Clock
    _move_tasks: MutableMapping[str, MoveTask]

    async def create_move_task(self, task: MoveTask) -> bool:
        if any(move_tasks.blocks(t, task) for t in self._move_tasks.values()):
            return False
        self._move_tasks[task.id] = task
        return True

    async def get_move_task(self, task_id: str) -> MoveTask | None:
        return self._move_tasks.get(task_id)

    async def list_move_tasks(self, source: QueueKey, *, limit: int) -> list[MoveTask]:
        # Insertion order breaks ties between tasks started at the same time.
        tasks = [t for t in self._move_tasks.values() if t.source == source]
        ordered = sorted(enumerate(tasks), key=lambda pair: (-pair[1].started_at, -pair[0]))
        return [task for _, task in ordered[:limit]]

    async def cancel_move_task(self, task_id: str) -> MoveTask | None:
        task = self._move_tasks.get(task_id)
        if task is not None:
            task = self._move_tasks[task_id] = move_tasks.cancelled(task)
        return task

    async def advance_move_task(
        self,
        task_id: str,
        *,
        moved: int,
        lease_until: float,
        finish: MoveTaskStatus | None = None,
        failure_reason: str | None = None,
    ) -> MoveTask | None:
        task = self._move_tasks.get(task_id)
        if task is not None:
            task = self._move_tasks[task_id] = move_tasks.advanced(
                task, moved=moved, lease_until=lease_until, finish=finish,
                failure_reason=failure_reason,
            )
        return task

    async def claim_move_tasks(self, *, lease_until: float, now: float | None) -> list[MoveTask]:
        at = self._clock.time() if now is None else now
        claimed = []
        for task in list(self._move_tasks.values()):
            if move_tasks.claimable(task, at):
                task = dataclasses.replace(task, lease_until=lease_until)
                self._move_tasks[task.id] = task
                claimed.append(task)
        return claimed
