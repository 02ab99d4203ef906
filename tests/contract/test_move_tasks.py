"""Message move tasks over every store: StartMessageMoveTask's rules, what a step moves,
cancelling, listing, and taking over a task whose runner stopped (a restart).

Runs are driven step by step with MoveTasks.step under the fake clock: the tests never
start the background runner (`QueueService.start_move_task` spawns it; `MoveTasks.start`
only records the task)."""

from __future__ import annotations

import asyncio

import pytest

from hopper.core.clock import FakeClock
from hopper.core.errors import InvalidParameter, InvalidParameterRule, ResourceNotFound
from hopper.core.model import DeadLetterRule, MoveTask, MoveTaskStatus, NewMessage, QueueKey
from hopper.core.move_tasks import LEASE_SECONDS, NO_SUCH_QUEUE, MoveTasks
from hopper.core.service import QueueService
from hopper.core.store import QueueStore

from .factories import attributes, key, make_dead_letter_pair, make_queue, message, receive, send


async def dead_letter(
    store: QueueStore, clock: FakeClock, source: QueueKey, *messages: NewMessage
) -> None:
    """Send `messages` to `source` (max_receive_count 1) and receive them until they
    are in its dead-letter queue."""
    await send(store, clock, source, *messages)
    for start in range(0, len(messages), 10):
        assert len(await receive(store, clock, source, lease=1)) == min(10, len(messages) - start)
    clock.advance(1)
    assert await receive(store, clock, source) == []


async def ids_in(store: QueueStore, clock: FakeClock, queue: QueueKey) -> set[str]:
    return {d.message.id for d in await receive(store, clock, queue, lease=1)}


async def depth(store: QueueStore, clock: FakeClock, queue: QueueKey) -> int:
    stats = await store.stats(queue, now=clock.now())
    return stats.visible + stats.in_flight + stats.delayed


class Restarted(MoveTasks):
    """The move tasks of another process (or of this one after a restart) on the same
    store; what it would run in the background is recorded instead, so the test drives
    each step itself."""

    def __init__(self, service: QueueService) -> None:
        super().__init__(service.store, service.clock, service.wakeups.notify)
        self.spawned: list[MoveTask] = []

    def spawn(self, task: MoveTask) -> None:
        self.spawned.append(task)


# --- what a step moves ------------------------------------------------------------------


async def test_a_task_moves_dead_letters_back_to_their_source_as_fresh_candidates(
    service: QueueService, store: QueueStore, clock: FakeClock
) -> None:
    source, dlq = await make_dead_letter_pair(store, clock, max_receive_count=1)
    sent = message("poison", attributes=attributes(), trace_header="Root=1")
    sent_at = clock.time()
    await dead_letter(store, clock, source, sent)
    task = await service.move_tasks.start(dlq, None, None)
    clock.advance(5)
    done = await service.move_tasks.step(task)
    assert (done.status, done.moved, done.to_move) == (MoveTaskStatus.COMPLETED, 1, 1)
    assert await depth(store, clock, dlq) == 0
    [back] = await receive(store, clock, source, lease=1)
    assert (back.message.id, back.message.body) == (sent.id, "poison")
    assert back.message.attributes == attributes()
    assert back.message.trace_header == "Root=1"
    assert back.message.sent_at == sent_at
    assert back.message.dead_letter_source is None
    # The receive count starts again: this is its first delivery, and only the next
    # receive moves it to the dead-letter queue again.
    assert back.receive_count == 1
    assert back.first_received_at == clock.time()
    clock.advance(1)
    assert await receive(store, clock, source) == []
    assert await ids_in(store, clock, dlq) == {sent.id}


async def test_a_receipt_from_before_the_move_no_longer_names_the_message(
    service: QueueService, store: QueueStore, clock: FakeClock
) -> None:
    source, dlq = await make_dead_letter_pair(store, clock, max_receive_count=1)
    await send(store, clock, dlq)
    [old] = await receive(store, clock, dlq, lease=1)
    clock.advance(1)
    other = await make_queue(store, clock, "other")
    task = await service.move_tasks.start(dlq, other, None)
    await service.move_tasks.step(task)
    [result] = await store.delete(dlq, [old.receipt], refuse_expired=False, now=clock.now())
    assert result.outcome.value == "gone"
    [fresh] = await receive(store, clock, other)
    assert fresh.message.id == old.message.id
    assert fresh.token > old.token


async def test_each_dead_letter_goes_back_to_the_queue_it_came_from(
    service: QueueService, store: QueueStore, clock: FakeClock
) -> None:
    dlq = await make_queue(store, clock, "dlq")
    first = await make_queue(store, clock, "first", dead_letter=DeadLetterRule(dlq, 1))
    second = await make_queue(store, clock, "second", dead_letter=DeadLetterRule(dlq, 1))
    a, b = message("a"), message("b")
    await dead_letter(store, clock, first, a)
    await dead_letter(store, clock, second, b)
    task = await service.move_tasks.start(dlq, None, None)
    assert (await service.move_tasks.step(task)).moved == 2
    assert await ids_in(store, clock, first) == {a.id}
    assert await ids_in(store, clock, second) == {b.id}


async def test_a_task_with_a_destination_moves_every_message_there(
    service: QueueService, store: QueueStore, clock: FakeClock
) -> None:
    source, dlq = await make_dead_letter_pair(store, clock, max_receive_count=1)
    elsewhere = await make_queue(store, clock, "elsewhere")
    dead, direct = message("dead"), message("sent straight to the dlq")
    await dead_letter(store, clock, source, dead)
    await send(store, clock, dlq, direct)
    task = await service.move_tasks.start(dlq, elsewhere, None)
    done = await service.move_tasks.step(task)
    assert (done.status, done.moved) == (MoveTaskStatus.COMPLETED, 2)
    moved = await receive(store, clock, elsewhere)
    assert {d.message.id for d in moved} == {dead.id, direct.id}
    assert all(d.message.dead_letter_source is None for d in moved)
    assert all(d.receive_count == 1 for d in moved)
    assert await receive(store, clock, source) == []


async def test_in_flight_and_delayed_messages_stay_in_the_dead_letter_queue(
    service: QueueService, store: QueueStore, clock: FakeClock
) -> None:
    source, dlq = await make_dead_letter_pair(store, clock, max_receive_count=1)
    elsewhere = await make_queue(store, clock, "elsewhere")
    held, delayed, ready = message("held"), message("delayed", delay=60.0), message("ready")
    await send(store, clock, dlq, held)
    assert await ids_in(store, clock, dlq) == {held.id}  # now in flight for 1 s
    await send(store, clock, dlq, delayed, ready)
    task = await service.move_tasks.start(dlq, elsewhere, None)
    assert task.to_move == 3
    done = await service.move_tasks.step(task)
    assert (done.status, done.moved) == (MoveTaskStatus.COMPLETED, 1)
    assert await ids_in(store, clock, elsewhere) == {ready.id}
    stats = await store.stats(dlq, now=clock.now())
    assert (stats.visible, stats.in_flight, stats.delayed) == (0, 1, 1)


async def test_messages_without_a_source_to_go_back_to_stay(
    service: QueueService, store: QueueStore, clock: FakeClock
) -> None:
    source, dlq = await make_dead_letter_pair(store, clock, max_receive_count=1)
    gone_source = await make_queue(store, clock, "gone", dead_letter=DeadLetterRule(dlq, 1))
    orphan, direct, dead = message("orphan"), message("direct"), message("dead")
    await dead_letter(store, clock, gone_source, orphan)
    await store.delete_queue(gone_source, now=clock.now())
    await send(store, clock, dlq, direct)
    await dead_letter(store, clock, source, dead)
    task = await service.move_tasks.start(dlq, None, None)
    done = await service.move_tasks.step(task)
    assert (done.status, done.moved) == (MoveTaskStatus.COMPLETED, 1)
    assert await ids_in(store, clock, source) == {dead.id}
    assert await ids_in(store, clock, dlq) == {orphan.id, direct.id}


async def test_a_step_moves_at_most_the_rate_oldest_first_until_the_source_is_drained(
    service: QueueService, store: QueueStore, clock: FakeClock
) -> None:
    source, dlq = await make_dead_letter_pair(store, clock, max_receive_count=1)
    elsewhere = await make_queue(store, clock, "elsewhere")
    sent = [message(f"m{n}") for n in range(5)]
    for one in sent:
        await send(store, clock, dlq, one)
        clock.advance(1)
    task = await service.move_tasks.start(dlq, elsewhere, 2)
    task = await service.move_tasks.step(task)
    assert (task.status, task.moved) == (MoveTaskStatus.RUNNING, 2)
    assert await ids_in(store, clock, elsewhere) == {sent[0].id, sent[1].id}
    task = await service.move_tasks.step(task)
    assert (task.status, task.moved) == (MoveTaskStatus.RUNNING, 4)
    task = await service.move_tasks.step(task)
    assert (task.status, task.moved, task.to_move) == (MoveTaskStatus.COMPLETED, 5, 5)
    assert await service.move_tasks.step(task) == task  # a finished task stays finished


async def test_a_task_fails_when_its_source_disappears(
    service: QueueService, store: QueueStore, clock: FakeClock
) -> None:
    source, dlq = await make_dead_letter_pair(store, clock, max_receive_count=1)
    await dead_letter(store, clock, source, message())
    task = await service.move_tasks.start(dlq, None, None)
    await store.delete_queue(dlq, now=clock.now())
    failed = await service.move_tasks.step(task)
    assert (failed.status, failed.failure_reason) == (MoveTaskStatus.FAILED, NO_SUCH_QUEUE)
    assert await store.get_move_task(task.id) == failed


async def test_a_task_fails_when_its_destination_disappears(
    service: QueueService, store: QueueStore, clock: FakeClock
) -> None:
    _, dlq = await make_dead_letter_pair(store, clock, max_receive_count=1)
    elsewhere = await make_queue(store, clock, "elsewhere")
    await send(store, clock, dlq)
    task = await service.move_tasks.start(dlq, elsewhere, None)
    await store.delete_queue(elsewhere, now=clock.now())
    failed = await service.move_tasks.step(task)
    assert (failed.status, failed.failure_reason) == (MoveTaskStatus.FAILED, NO_SUCH_QUEUE)
    assert await depth(store, clock, dlq) == 1


# --- starting: the rules ----------------------------------------------------------------


async def test_a_queue_that_is_no_dead_letter_queue_cannot_be_a_source(
    service: QueueService, store: QueueStore, clock: FakeClock
) -> None:
    plain = await make_queue(store, clock, "plain")
    with pytest.raises(InvalidParameterRule) as caught:
        await service.move_tasks.start(plain, None, None)
    assert caught.value.parameter == "SourceArn"
    assert caught.value.reason == "Source queue must be configured as a Dead Letter Queue."


async def test_an_unknown_source_or_destination_is_resource_not_found(
    service: QueueService, store: QueueStore, clock: FakeClock
) -> None:
    _, dlq = await make_dead_letter_pair(store, clock)
    with pytest.raises(ResourceNotFound) as caught:
        await service.move_tasks.start(key("missing"), None, None)
    assert caught.value.parameter == "SourceArn"
    with pytest.raises(ResourceNotFound) as caught:
        await service.move_tasks.start(dlq, key("missing"), None)
    assert caught.value.parameter == "DestinationArn"


@pytest.mark.parametrize("rate", [0, -1, 501])
async def test_a_rate_outside_1_to_500_is_invalid(
    service: QueueService, store: QueueStore, clock: FakeClock, rate: int
) -> None:
    _, dlq = await make_dead_letter_pair(store, clock)
    with pytest.raises(InvalidParameter) as caught:
        await service.move_tasks.start(dlq, None, rate)
    assert caught.value.parameter == "MaxNumberOfMessagesPerSecond"
    assert await store.list_move_tasks(dlq, limit=10) == []


@pytest.mark.parametrize("rate", [1, 500])
async def test_a_rate_of_1_to_500_is_accepted(
    service: QueueService, store: QueueStore, clock: FakeClock, rate: int
) -> None:
    _, dlq = await make_dead_letter_pair(store, clock)
    task = await service.move_tasks.start(dlq, None, rate)
    assert (task.max_per_second, task.status) == (rate, MoveTaskStatus.RUNNING)


async def test_a_source_has_one_active_task_at_a_time(
    service: QueueService, store: QueueStore, clock: FakeClock
) -> None:
    _, dlq = await make_dead_letter_pair(store, clock)
    await send(store, clock, dlq)
    first = await service.move_tasks.start(dlq, None, None)
    with pytest.raises(InvalidParameterRule) as caught:
        await service.move_tasks.start(dlq, None, None)
    assert caught.value.parameter == "SourceArn"
    await service.move_tasks.cancel(first.id, dlq)
    with pytest.raises(InvalidParameterRule):  # CANCELLING is still active
        await service.move_tasks.start(dlq, None, None)
    await service.move_tasks.step(first)
    second = await service.move_tasks.start(dlq, None, None)
    assert second.id != first.id


async def test_a_finished_task_lets_the_next_one_start(
    service: QueueService, store: QueueStore, clock: FakeClock
) -> None:
    _, dlq = await make_dead_letter_pair(store, clock)
    first = await service.move_tasks.start(dlq, None, None)
    assert (await service.move_tasks.step(first)).status is MoveTaskStatus.COMPLETED
    await service.move_tasks.start(dlq, None, None)


async def test_tasks_of_different_sources_run_side_by_side(
    service: QueueService, store: QueueStore, clock: FakeClock
) -> None:
    source, dlq = await make_dead_letter_pair(store, clock, max_receive_count=1)
    other = await make_queue(store, clock, "other-dlq")
    other_source = await make_queue(
        store, clock, "other-source", dead_letter=DeadLetterRule(other, 1)
    )
    mine, theirs = message("mine"), message("theirs")
    await dead_letter(store, clock, source, mine)
    await dead_letter(store, clock, other_source, theirs)
    first = await service.move_tasks.start(dlq, None, None)
    second = await service.move_tasks.start(other, None, None)
    # Both are active at once: one task per source, not one for the whole store.
    for task in (first, second):
        recorded = await store.get_move_task(task.id)
        assert recorded is not None and recorded.status is MoveTaskStatus.RUNNING
    clock.advance(5)
    done = await asyncio.gather(
        service.move_tasks.step(first), service.move_tasks.step(second)
    )
    assert [(d.status, d.moved) for d in done] == [(MoveTaskStatus.COMPLETED, 1)] * 2
    # Each moved its own dead letters, back to their own source.
    assert await ids_in(store, clock, source) == {mine.id}
    assert await ids_in(store, clock, other_source) == {theirs.id}


# --- cancelling ---------------------------------------------------------------------------


async def test_a_cancelled_task_is_cancelling_until_its_runner_reports_then_cancelled(
    service: QueueService, store: QueueStore, clock: FakeClock
) -> None:
    _, dlq = await make_dead_letter_pair(store, clock)
    elsewhere = await make_queue(store, clock, "elsewhere")
    for _ in range(3):
        await send(store, clock, dlq)
    task = await service.move_tasks.start(dlq, elsewhere, 1)
    task = await service.move_tasks.step(task)
    cancelling = await service.move_tasks.cancel(task.id, dlq)
    assert (cancelling.status, cancelling.moved) == (MoveTaskStatus.CANCELLING, 1)
    cancelled = await service.move_tasks.step(task)
    assert (cancelled.status, cancelled.moved) == (MoveTaskStatus.CANCELLED, 1)
    assert await depth(store, clock, dlq) == 2
    assert await service.move_tasks.list_tasks(dlq, None) == [cancelled]


async def test_only_a_running_task_can_be_cancelled(
    service: QueueService, store: QueueStore, clock: FakeClock
) -> None:
    _, dlq = await make_dead_letter_pair(store, clock)
    task = await service.move_tasks.start(dlq, None, None)
    await service.move_tasks.step(task)
    with pytest.raises(InvalidParameterRule) as caught:
        await service.move_tasks.cancel(task.id, dlq)
    assert caught.value.parameter == "TaskHandle"


async def test_cancelling_an_unknown_task_or_source_is_resource_not_found(
    service: QueueService, store: QueueStore, clock: FakeClock
) -> None:
    source, dlq = await make_dead_letter_pair(store, clock)
    task = await service.move_tasks.start(dlq, None, None)
    with pytest.raises(ResourceNotFound) as caught:
        await service.move_tasks.cancel("no-such-task", dlq)
    assert caught.value.parameter is None
    with pytest.raises(ResourceNotFound) as caught:  # the task is not this queue's
        await service.move_tasks.cancel(task.id, source)
    assert caught.value.parameter is None
    with pytest.raises(ResourceNotFound) as caught:
        await service.move_tasks.cancel(task.id, key("missing"))
    assert caught.value.parameter == "SourceArn"
    assert (await store.get_move_task(task.id)) == task


# --- listing ------------------------------------------------------------------------------


async def test_tasks_are_listed_newest_first_with_their_counts(
    service: QueueService, store: QueueStore, clock: FakeClock
) -> None:
    _, dlq = await make_dead_letter_pair(store, clock)
    elsewhere = await make_queue(store, clock, "elsewhere")
    started = []
    for _ in range(3):
        await send(store, clock, dlq)
        task = await service.move_tasks.start(dlq, elsewhere, None)
        started.append(await service.move_tasks.step(task))
        clock.advance(1)
    listed = await service.move_tasks.list_tasks(dlq, 10)
    assert listed == started[::-1]
    assert [(t.moved, t.to_move) for t in listed] == [(1, 1)] * 3
    assert await service.move_tasks.list_tasks(dlq, None) == [started[-1]]
    assert await service.move_tasks.list_tasks(dlq, 2) == started[:0:-1]


async def test_tasks_started_in_the_same_instant_list_in_reverse_start_order(
    service: QueueService, store: QueueStore, clock: FakeClock
) -> None:
    _, dlq = await make_dead_letter_pair(store, clock)
    first = await service.move_tasks.step(await service.move_tasks.start(dlq, None, None))
    second = await service.move_tasks.start(dlq, None, None)
    assert [t.id for t in await service.move_tasks.list_tasks(dlq, 10)] == [second.id, first.id]


async def test_a_queue_without_tasks_lists_none(
    service: QueueService, store: QueueStore, clock: FakeClock
) -> None:
    _, dlq = await make_dead_letter_pair(store, clock)
    assert await service.move_tasks.list_tasks(dlq, None) == []


@pytest.mark.parametrize("max_results", [0, 11])
async def test_listing_more_than_10_or_fewer_than_1_is_invalid(
    service: QueueService, store: QueueStore, clock: FakeClock, max_results: int
) -> None:
    _, dlq = await make_dead_letter_pair(store, clock)
    with pytest.raises(InvalidParameter) as caught:
        await service.move_tasks.list_tasks(dlq, max_results)
    assert caught.value.parameter == "MaxResults"


async def test_listing_the_tasks_of_an_unknown_queue_is_resource_not_found(
    service: QueueService,
) -> None:
    with pytest.raises(ResourceNotFound) as caught:
        await service.move_tasks.list_tasks(key("missing"), None)
    assert caught.value.parameter == "SourceArn"


# --- surviving a restart: leases ---------------------------------------------------------


async def test_a_task_whose_runner_reports_is_not_taken_over(
    service: QueueService, store: QueueStore, clock: FakeClock
) -> None:
    _, dlq = await make_dead_letter_pair(store, clock)
    elsewhere = await make_queue(store, clock, "elsewhere")
    for _ in range(3):
        await send(store, clock, dlq)
    task = await service.move_tasks.start(dlq, elsewhere, 1)
    clock.advance(LEASE_SECONDS - 1)
    task = await service.move_tasks.step(task)  # renews the lease
    assert task.status is MoveTaskStatus.RUNNING
    clock.advance(LEASE_SECONDS - 1)
    other = Restarted(service)
    assert await other.resume_orphans() == []
    assert other.spawned == []


async def test_a_task_whose_lease_ran_out_is_claimed_exactly_once(
    service: QueueService, store: QueueStore, clock: FakeClock
) -> None:
    _, dlq = await make_dead_letter_pair(store, clock)
    task = await service.move_tasks.start(dlq, None, None)
    clock.advance(LEASE_SECONDS)
    lease = clock.time() + LEASE_SECONDS
    [claimed] = await store.claim_move_tasks(lease_until=lease, now=clock.now())
    assert (claimed.id, claimed.lease_until) == (task.id, lease)
    assert await store.claim_move_tasks(lease_until=lease, now=clock.now()) == []


async def test_a_restarted_process_resumes_an_orphaned_task_where_it_was(
    service: QueueService, store: QueueStore, clock: FakeClock
) -> None:
    _, dlq = await make_dead_letter_pair(store, clock)
    elsewhere = await make_queue(store, clock, "elsewhere")
    for _ in range(3):
        await send(store, clock, dlq)
    task = await service.move_tasks.step(await service.move_tasks.start(dlq, elsewhere, 2))
    assert task.moved == 2
    # The process running the task stops; its lease runs out.
    clock.advance(LEASE_SECONDS)
    after_restart = Restarted(service)
    [resumed] = await after_restart.resume_orphans()
    assert after_restart.spawned == [resumed]
    assert (resumed.id, resumed.status, resumed.moved) == (task.id, MoveTaskStatus.RUNNING, 2)
    assert await after_restart.resume_orphans() == []  # claimed once, not twice
    done = await after_restart.step(resumed)
    assert (done.status, done.moved) == (MoveTaskStatus.COMPLETED, 3)
    assert await depth(store, clock, elsewhere) == 3


async def test_an_orphaned_cancelling_task_is_taken_over_and_finishes_cancelled(
    service: QueueService, store: QueueStore, clock: FakeClock
) -> None:
    _, dlq = await make_dead_letter_pair(store, clock)
    await send(store, clock, dlq)
    task = await service.move_tasks.start(dlq, None, None)
    await service.move_tasks.cancel(task.id, dlq)
    clock.advance(LEASE_SECONDS)
    after_restart = Restarted(service)
    [resumed] = await after_restart.resume_orphans()
    assert resumed.status is MoveTaskStatus.CANCELLING
    assert (await after_restart.step(resumed)).status is MoveTaskStatus.CANCELLED
    assert await after_restart.resume_orphans() == []


async def test_concurrent_claims_split_the_orphaned_tasks_without_overlap(
    service: QueueService, store: QueueStore, clock: FakeClock
) -> None:
    started = set()
    for n in range(4):
        dlq = await make_queue(store, clock, f"dlq-{n}")
        await make_queue(store, clock, f"source-{n}", dead_letter=DeadLetterRule(dlq, 1))
        started.add((await service.move_tasks.start(dlq, None, None)).id)
    clock.advance(LEASE_SECONDS)
    lease = clock.time() + LEASE_SECONDS
    claims = await asyncio.gather(
        *[store.claim_move_tasks(lease_until=lease, now=clock.now()) for _ in range(3)]
    )
    claimed = [task.id for claim in claims for task in claim]
    assert sorted(claimed) == sorted(started)


async def test_concurrent_starts_on_one_source_record_one_task(
    service: QueueService, store: QueueStore, clock: FakeClock
) -> None:
    _, dlq = await make_dead_letter_pair(store, clock)
    outcomes = await asyncio.gather(
        *[service.move_tasks.start(dlq, None, None) for _ in range(4)], return_exceptions=True
    )
    started = [o for o in outcomes if isinstance(o, MoveTask)]
    assert len(started) == 1
    assert all(isinstance(o, InvalidParameterRule) for o in outcomes if o not in started)
    assert await store.list_move_tasks(dlq, limit=10) == started


async def test_expired_dead_letters_are_not_moved_and_moved_ones_keep_their_age(
    service: QueueService, store: QueueStore, clock: FakeClock
) -> None:
    dlq = await make_queue(store, clock, "dlq", message_retention_period=100.0)
    await make_queue(store, clock, "source", dead_letter=DeadLetterRule(dlq, 1))
    short = await make_queue(store, clock, "short", message_retention_period=60.0)
    old, young = message("old"), message("young")
    await send(store, clock, dlq, old)
    clock.advance(50)
    await send(store, clock, dlq, young)
    clock.advance(50)  # "old" is past the dead-letter queue's retention now
    task = await service.move_tasks.start(dlq, short, None)
    assert task.to_move == 1
    done = await service.move_tasks.step(task)
    assert (done.status, done.moved) == (MoveTaskStatus.COMPLETED, 1)
    # At the destination, retention still counts from the original send: "young" was
    # sent 50 s ago and "short" keeps messages 60 s.
    clock.advance(10)
    assert await receive(store, clock, short) == []
    assert await depth(store, clock, short) == 0


async def test_a_closing_process_hands_its_running_tasks_back_at_once(
    service: QueueService, store: QueueStore, clock: FakeClock
) -> None:
    _, dlq = await make_dead_letter_pair(store, clock)
    elsewhere = await make_queue(store, clock, "elsewhere")
    for _ in range(3):
        await send(store, clock, dlq)
    task = await service.move_tasks.start(dlq, elsewhere, 1)
    service.move_tasks.spawn(task)
    await service.move_tasks.close()
    # No need to wait out the lease: the next process claims the task right away.
    [claimed] = await store.claim_move_tasks(lease_until=clock.time() + 1, now=clock.now())
    assert (claimed.id, claimed.status) == (task.id, MoveTaskStatus.RUNNING)


async def test_a_cancelled_task_ends_cancelled_when_its_process_closes(
    service: QueueService, store: QueueStore, clock: FakeClock
) -> None:
    _, dlq = await make_dead_letter_pair(store, clock)
    elsewhere = await make_queue(store, clock, "elsewhere")
    for _ in range(3):
        await send(store, clock, dlq)
    task = await service.move_tasks.start(dlq, elsewhere, 1)
    service.move_tasks.spawn(task)
    await service.move_tasks.cancel(task.id, dlq)
    await service.move_tasks.close()
    ended = await store.get_move_task(task.id)
    assert ended is not None and ended.status is MoveTaskStatus.CANCELLED
