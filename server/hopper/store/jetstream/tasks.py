"""Message move tasks: all of them one entry of the `<prefix>_queues` bucket, changed by
compare-and-set, so "one active task per source" and "two claimers never take the same
task" hold across processes. The rules are the reference model's."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from hopper.core.clock import Clock
from hopper.core.errors import StoreUnavailable
from hopper.core.model import MoveTask, MoveTaskStatus, QueueKey
from hopper.store.jetstream import codec, edge
from hopper.store.jetstream.records import MAX_ROUNDS
from hopper.store.ledger.rules import LedgerStore

T = TypeVar("T")
TASKS_KEY = "tasks"


class MoveTasks:
    def __init__(self, res: edge.Resources, clock: Clock) -> None:
        self._kv = res.queues
        self._clock = clock

    async def _step(
        self, op: Callable[[LedgerStore], Awaitable[T]], *, write: bool = True
    ) -> T:
        """Run `op` on the model holding every task; write them back by compare-and-set
        when it changed them."""
        for _ in range(MAX_ROUNDS):
            raw, revision = await edge.get(self._kv, TASKS_KEY)
            model = LedgerStore(self._clock, move_tasks=codec.decode_tasks(raw))
            result = await op(model)
            data = codec.encode_tasks(model.move_tasks())
            if not write or data == (raw or b"[]"):
                return result
            try:
                await edge.put(self._kv, TASKS_KEY, data, revision)
            except edge.Conflict:
                continue
            return result
        raise StoreUnavailable("JetStream: too much contention on the move tasks")

    async def create(self, task: MoveTask) -> bool:
        return await self._step(lambda model: model.create_move_task(task))

    async def get(self, task_id: str) -> MoveTask | None:
        return await self._step(lambda model: model.get_move_task(task_id), write=False)

    async def of_source(self, source: QueueKey, *, limit: int) -> list[MoveTask]:
        return await self._step(
            lambda model: model.list_move_tasks(source, limit=limit), write=False
        )

    async def cancel(self, task_id: str) -> MoveTask | None:
        return await self._step(lambda model: model.cancel_move_task(task_id))

    async def advance(
        self,
        task_id: str,
        *,
        moved: int,
        lease_until: float,
        finish: MoveTaskStatus | None,
        failure_reason: str | None,
    ) -> MoveTask | None:
        return await self._step(
            lambda model: model.advance_move_task(
                task_id,
                moved=moved,
                lease_until=lease_until,
                finish=finish,
                failure_reason=failure_reason,
            )
        )

    async def claim(self, *, lease_until: float, now: float) -> list[MoveTask]:
        return await self._step(
            lambda model: model.claim_move_tasks(lease_until=lease_until, now=now)
        )
