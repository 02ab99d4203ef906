"""The background runner of a move task, on the memory store under a fake clock: it runs
a task to its end, wakes the queues messages arrive at, and, when the store fails,
stops quietly and leaves the task to be taken over once its lease has run out."""

from __future__ import annotations

from typing import Any

from hopper.core.clock import FakeClock
from hopper.core.errors import StoreUnavailable
from hopper.core.model import DeadLetterRule, MoveTaskStatus, NewMessage, QueueConfig, QueueKey
from hopper.core.move_tasks import LEASE_SECONDS, MoveTasks
from hopper.store.memory import MemoryQueueStore

DLQ = QueueKey("000000000000", "dlq")
SOURCE = QueueKey("000000000000", "source")
ELSEWHERE = QueueKey("000000000000", "elsewhere")


class FailingStore:
    """The memory store, whose database went away just as the task was to move messages.

    A wrapper, not a subclass: the memory store may be compiled (setup.py), and an
    interpreted class cannot inherit from a compiled one."""

    def __init__(self, clock: FakeClock) -> None:
        self._store = MemoryQueueStore(clock)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    async def move_messages(
        self, source: QueueKey, destination: QueueKey | None, *, limit: int, now: float | None
    ) -> int:
        raise StoreUnavailable("connection refused")


async def queues(store: Any, clock: FakeClock, messages: int) -> None:
    for queue, config in [
        (DLQ, QueueConfig()),
        (SOURCE, QueueConfig(dead_letter=DeadLetterRule(DLQ, 1))),
        (ELSEWHERE, QueueConfig()),
    ]:
        await store.create_queue(queue, config, {}, now=clock.now())
    sent = [NewMessage(id=f"m{n}", body="x") for n in range(messages)]
    await store.send(DLQ, sent, now=clock.now())


async def test_the_runner_moves_batches_until_the_task_is_completed_and_wakes_the_destination():
    clock = FakeClock()
    store = MemoryQueueStore(clock)
    await queues(store, clock, messages=250)
    woken: list[QueueKey] = []
    tasks = MoveTasks(store, clock, woken.append)
    task = await tasks.start(DLQ, ELSEWHERE, None)
    await tasks.run(task)
    done = await store.get_move_task(task.id)
    assert done is not None
    assert (done.status, done.moved, done.to_move) == (MoveTaskStatus.COMPLETED, 250, 250)
    assert woken == [ELSEWHERE] * 3  # one wake-up per batch that moved messages


async def test_a_store_failure_stops_the_runner_and_leaves_the_task_to_be_taken_over():
    clock = FakeClock()
    store = FailingStore(clock)
    await queues(store, clock, messages=3)
    tasks = MoveTasks(store, clock, lambda key: None)
    task = await tasks.start(DLQ, ELSEWHERE, None)
    await tasks.run(task)  # returns: no exception escapes into the event loop
    assert await store.get_move_task(task.id) == task  # still RUNNING, lease not renewed
    clock.advance(LEASE_SECONDS)
    [claimed] = await store.claim_move_tasks(lease_until=clock.time() + 1, now=clock.now())
    assert (claimed.id, claimed.status) == (task.id, MoveTaskStatus.RUNNING)
