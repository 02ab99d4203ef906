"""When the Postgres store vacuums its messages table (store/postgres/vacuum.py). Here because
only the Postgres store has dead index entries to clear; test_drain.py shows the
effect on receives, these tests the schedule, and the last one a real VACUUM."""

from __future__ import annotations

import asyncio
import uuid

from hopper.core.model import NewMessage, QueueConfig, QueueKey
from hopper.store.postgres.vacuum import Vacuum

from .conftest import StoreOpener


class Runs:
    """A stand-in for the VACUUM: counts calls, reports a table of `rows` rows."""

    def __init__(self, rows: float = 0.0, fails: bool = False) -> None:
        self.rows = rows
        self.fails = fails
        self.calls = 0
        self.release = asyncio.Event()
        self.release.set()

    async def __call__(self) -> float:
        self.calls += 1
        await self.release.wait()
        if self.fails:
            raise OSError("connection lost")
        return self.rows


async def settle(vacuum: Vacuum) -> None:
    task = vacuum._task
    if task is not None:
        await task


async def test_no_vacuum_runs_before_the_minimum_number_of_deletes() -> None:
    runs = Runs()
    vacuum = Vacuum(runs, minimum=100)
    vacuum.deleted(99)
    await settle(vacuum)
    assert runs.calls == 0
    vacuum.deleted(1)
    await settle(vacuum)
    assert runs.calls == 1


async def test_the_next_threshold_is_a_fraction_of_the_table_learnt_from_the_last_run() -> None:
    runs = Runs(rows=10_000)
    vacuum = Vacuum(runs, minimum=100, fraction=0.05)
    vacuum.deleted(100)
    await settle(vacuum)
    vacuum.deleted(499)
    await settle(vacuum)
    assert runs.calls == 1
    vacuum.deleted(1)
    await settle(vacuum)
    assert runs.calls == 2


async def test_deletes_during_a_run_start_no_second_one_at_the_same_time() -> None:
    runs = Runs()
    runs.release.clear()
    vacuum = Vacuum(runs, minimum=10)
    vacuum.deleted(10)
    await asyncio.sleep(0)
    vacuum.deleted(50)
    await asyncio.sleep(0)
    assert runs.calls == 1
    runs.release.set()
    await settle(vacuum)
    vacuum.deleted(0)  # the deletes made meanwhile count towards the next run
    await settle(vacuum)
    assert runs.calls == 2
    await vacuum.close()


async def test_a_failed_run_is_logged_and_the_next_threshold_tries_again() -> None:
    runs = Runs(fails=True)
    vacuum = Vacuum(runs, minimum=10)
    vacuum.deleted(10)
    await settle(vacuum)
    assert vacuum.runs == 0
    runs.fails = False
    vacuum.deleted(10)
    await settle(vacuum)
    assert (runs.calls, vacuum.runs) == (2, 1)


async def test_the_store_vacuums_its_messages_table_after_enough_deletes(
    open_store: StoreOpener,
) -> None:
    queue = QueueKey("000000000000", "q")
    async with open_store(listen=False) as store:
        store.vacuum = Vacuum(store._vacuum_messages, minimum=20)
        await store.create_queue(queue, QueueConfig(), {}, now=None)
        batch = [NewMessage(id=str(uuid.uuid4()), body="x") for _ in range(20)]
        await store.send(queue, batch, now=None)
        deliveries = await store.receive(queue, max_messages=10, visibility_timeout=30, now=None)
        deliveries += await store.receive(queue, max_messages=10, visibility_timeout=30, now=None)
        await store.delete(queue, [d.receipt for d in deliveries], refuse_expired=False, now=None)
        await settle(store.vacuum)
        assert store.vacuum.runs == 1
        vacuums = await store._db.fetchval(
            "SELECT vacuum_count FROM pg_stat_user_tables WHERE relid = 'messages'::regclass"
        )
    assert vacuums == 1
