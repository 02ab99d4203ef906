"""Message move tasks: StartMessageMoveTask's rules, and the runner that moves messages
in the background of the server process, batch by batch, at the requested rate.

A task is recorded in the store with a lease. The process running it renews the lease
with every report; a task whose lease ran out (its process stopped) is taken over by
whichever process claims it next (`resume_orphans`, run periodically by the service),
so on Postgres a task survives a restart and resumes where it was.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import uuid
from collections.abc import Callable

from hopper.core import limits
from hopper.core.clock import Clock
from hopper.core.errors import (
    InvalidParameter,
    InvalidParameterRule,
    QueueError,
    QueueNotFound,
    ResourceNotFound,
)
from hopper.core.model import MoveTask, MoveTaskStatus, QueueKey
from hopper.core.store import QueueStore

# How long a runner's claim on a task lasts without a report.
LEASE_SECONDS = 30.0
# Messages per store call: short transactions, however high the rate.
BATCH_LIMIT = 100
# AWS's failure reason when a queue the task moves to or from has disappeared.
NO_SUCH_QUEUE = "AWS.SimpleQueueService.NonExistentQueue"

Arrived = Callable[[QueueKey], None]


# --- the state changes of a task ---------------------------------------------------------
# The rules each store applies atomically. The in-memory store calls these functions
# (and the JetStream store runs the in-memory store's model under compare-and-set, so
# it calls them too); the Postgres store decides each inside one statement, since a
# read-modify-write across round trips would race another process's runner:
# `cancelled` and `advanced` are the guarded UPDATEs cancel_move_task and
# advance_move_task of queries.sql, `claimable` the WHERE of claim_move_tasks, and
# `blocks` the unique index move_tasks_one_active (migration 0010).
# tests/contract/test_move_tasks.py pins every store to the same outcomes.


def blocks(active: MoveTask, new: MoveTask) -> bool:
    """Whether task `active` keeps `new` from starting: SQS runs one active task per
    source queue."""
    return active.source == new.source and active.status.active


def claimable(task: MoveTask, now: float) -> bool:
    """Whether a runner may take `task` over: it is active and its runner's lease ran
    out (the runner died, or its process did)."""
    return task.status.active and task.lease_until <= now


def cancelled(task: MoveTask) -> MoveTask:
    """CancelMessageMoveTask's change: a RUNNING task becomes CANCELLING (its runner
    finishes it as CANCELLED); any other task is left as it is."""
    if task.status is not MoveTaskStatus.RUNNING:
        return task
    return dataclasses.replace(task, status=MoveTaskStatus.CANCELLING)


def advanced(
    task: MoveTask,
    *,
    moved: int,
    lease_until: float,
    finish: MoveTaskStatus | None,
    failure_reason: str | None,
) -> MoveTask:
    """A runner's report: `moved` more messages and a renewed lease; then a CANCELLING
    task becomes CANCELLED, and a RUNNING one becomes `finish` (with `failure_reason`)
    when given. A task no longer active is left as it is."""
    if not task.status.active:
        return task
    status, reason = task.status, task.failure_reason
    if status is MoveTaskStatus.CANCELLING:
        status = MoveTaskStatus.CANCELLED
    elif finish is not None:
        status, reason = finish, failure_reason
    return dataclasses.replace(
        task, moved=task.moved + moved, lease_until=lease_until, status=status,
        failure_reason=reason,
    )


class MoveTasks:
    """The move tasks of one QueueService. `arrived(key)` is told when messages were
    moved to `key` (the service wakes that queue's long polls)."""

    def __init__(self, store: QueueStore, clock: Clock, arrived: Arrived) -> None:
        self.store = store
        self.clock = clock
        self.arrived = arrived
        self._running: dict[str, asyncio.Task[None]] = {}

    # --- the actions ------------------------------------------------------------------

    async def start(
        self, source: QueueKey, destination: QueueKey | None, max_per_second: int | None
    ) -> MoveTask:
        """StartMessageMoveTask. Raises ResourceNotFound("SourceArn"/"DestinationArn")
        for a queue that does not exist, InvalidParameterRule when the source is not a
        dead-letter queue, the rate is outside 1..500, or the source has an active task.
        The task is recorded, then run in the background (`spawn`) by the caller."""
        _check_rate(max_per_second)
        stats = await self._source_stats(source)
        if destination is not None and await self.store.get_queue(destination) is None:
            raise ResourceNotFound("DestinationArn")
        if not await self.store.dead_letter_sources(source):
            raise InvalidParameterRule(
                "SourceArn", source.name, "Source queue must be configured as a Dead Letter Queue."
            )
        task = MoveTask(
            id=str(uuid.uuid4()),
            source=source,
            destination=destination,
            max_per_second=max_per_second,
            status=MoveTaskStatus.RUNNING,
            started_at=self.clock.time(),
            to_move=stats,
            lease_until=self._lease(),
        )
        if not await self.store.create_move_task(task):
            raise InvalidParameterRule(
                "SourceArn",
                source.name,
                "There is already a task running. Only one active task is allowed for a "
                "source queue arn at a given time.",
            )
        return task

    async def cancel(self, task_id: str, source: QueueKey) -> MoveTask:
        """CancelMessageMoveTask: the task becomes CANCELLING, and CANCELLED once its
        runner reports. Raises ResourceNotFound (no such source queue, no such task),
        InvalidParameterRule (the task is not running)."""
        if await self.store.get_queue(source) is None:
            raise ResourceNotFound("SourceArn")
        task = await self.store.get_move_task(task_id)
        if task is None or task.source != source:
            raise ResourceNotFound(None)
        cancelled = await self.store.cancel_move_task(task_id)
        if cancelled is None or cancelled.status is not MoveTaskStatus.CANCELLING:
            raise InvalidParameterRule(
                "TaskHandle", task_id, "Only running tasks can be cancelled."
            )
        return cancelled

    async def list_tasks(self, source: QueueKey, max_results: int | None) -> list[MoveTask]:
        """ListMessageMoveTasks: the most recent tasks first, 1 by default, at most 10.
        Raises ResourceNotFound("SourceArn"), InvalidParameterRule (max_results)."""
        count = 1 if max_results is None else max_results
        if not 1 <= count <= limits.MAX_MOVE_TASK_RESULTS:
            raise InvalidParameter(
                "MaxResults",
                str(count),
                f"You must enter a number that's between 1 and {limits.MAX_MOVE_TASK_RESULTS}.",
            )
        if await self.store.get_queue(source) is None:
            raise ResourceNotFound("SourceArn")
        return await self.store.list_move_tasks(source, limit=count)

    # --- running ------------------------------------------------------------------------

    async def step(self, task: MoveTask) -> MoveTask:
        """Move one batch of `task` and report it: at most the per-second rate (and at
        most BATCH_LIMIT). A batch that moves fewer than it asked for found the source
        drained: the task is COMPLETED. A queue that disappeared fails it."""
        # The task as recorded now, not as of the last report: a cancel that arrived in
        # between must stop the moving before another batch goes.
        current = await self.store.get_move_task(task.id)
        if current is None:
            return task
        task = current
        limit = min(task.max_per_second or BATCH_LIMIT, BATCH_LIMIT)
        finish: MoveTaskStatus | None = None
        reason = None
        moved = 0
        if task.status is MoveTaskStatus.RUNNING:
            try:
                moved = await self.store.move_messages(
                    task.source, task.destination, limit=limit, now=self.clock.now()
                )
            except QueueNotFound:
                finish, reason = MoveTaskStatus.FAILED, NO_SUCH_QUEUE
            else:
                if moved < limit:
                    finish = MoveTaskStatus.COMPLETED
        if moved:
            await self._announce(task)
        reported = await self.store.advance_move_task(
            task.id, moved=moved, lease_until=self._lease(), finish=finish, failure_reason=reason
        )
        return reported or task

    def spawn(self, task: MoveTask) -> None:
        """Run `task` in the background until it is no longer active."""
        if task.id in self._running:
            return
        runner = asyncio.create_task(self.run(task), name=f"hopper-move-task-{task.id}")
        self._running[task.id] = runner
        runner.add_done_callback(lambda _: self._running.pop(task.id, None))

    async def resume_orphans(self) -> list[MoveTask]:
        """Claim and spawn the active tasks whose runner stopped renewing its lease."""
        claimed = await self.store.claim_move_tasks(lease_until=self._lease(), now=self.clock.now())
        for task in claimed:
            self.spawn(task)
        return claimed

    async def close(self) -> None:
        """Stop every runner of this process. Their tasks stay active in the store and
        their leases are handed back (end now), so another process, or this one
        restarted, resumes them in its next housekeeping round. Were the store down,
        the leases simply run out."""
        runners = dict(self._running)
        for runner in runners.values():
            runner.cancel()
        for runner in runners.values():
            with contextlib.suppress(asyncio.CancelledError):
                await runner
        self._running.clear()
        for task_id in runners:
            # An empty report: renews nothing, and a CANCELLING task ends CANCELLED.
            with contextlib.suppress(QueueError):
                await self.store.advance_move_task(
                    task_id, moved=0, lease_until=self.clock.time()
                )

    async def run(self, task: MoveTask) -> None:
        """Step `task` at its rate until it is no longer active, or until the store
        fails (then the task stays active, for a housekeeping round to take over once
        its lease ran out). `spawn` runs this in the background."""
        while task.status.active:
            try:
                task = await self.step(task)
            except QueueError:
                # The store is unavailable: stop renewing the lease. The task stays
                # active, and a housekeeping round takes it over once the lease ran out.
                return
            # The rate is per second: a batch of n messages takes n / rate seconds.
            rate = task.max_per_second
            await asyncio.sleep(0.0 if rate is None else min(rate, BATCH_LIMIT) / rate)

    async def _announce(self, task: MoveTask) -> None:
        if task.destination is not None:
            self.arrived(task.destination)
            return
        for source in await self.store.dead_letter_sources(task.source):
            self.arrived(source)

    def _lease(self) -> float:
        return self.clock.time() + LEASE_SECONDS

    async def _source_stats(self, source: QueueKey) -> int:
        try:
            stats = await self.store.stats(source, now=self.clock.now())
        except QueueNotFound:
            raise ResourceNotFound("SourceArn") from None
        return stats.visible + stats.in_flight + stats.delayed


def _check_rate(max_per_second: int | None) -> None:
    if max_per_second is None:
        return
    if not 1 <= max_per_second <= limits.MAX_MOVE_TASK_RATE:
        raise InvalidParameter(
            "MaxNumberOfMessagesPerSecond",
            str(max_per_second),
            f"You must enter a number that's between 1 and {limits.MAX_MOVE_TASK_RATE}.",
        )
