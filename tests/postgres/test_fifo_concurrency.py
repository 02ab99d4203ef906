"""FIFO queues under real concurrency on Postgres: workers on several pools receiving,
processing and deleting while senders add to every group; concurrent retries of one
deduplication id; concurrent retries of one receive attempt. The memory store is atomic
by construction (one loop, no awaits mid-operation); here the database's locking keeps
the promises, so they are tested here."""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections import defaultdict

import asyncpg
import pytest

from hopper.core.model import Delivery, NewMessage, QueueConfig, QueueKey, VisibilityChange
from hopper.store.postgres import PostgresQueueStore
from hopper.store.postgres.pool import receive_lock
from hopper.store.postgres.schema import queries

from .conftest import StoreOpener
from .databases import SCHEMA

ACCOUNT = "000000000000"
QUEUE = QueueKey(ACCOUNT, "q.fifo")
GROUPS = [f"g{n}" for n in range(40)]
PER_GROUP = 15
WORKERS = 16
SENDERS = 4


class Ledger:
    """What the workers saw: who holds each group right now, and each group's messages
    in the order they were delivered. A worker takes its groups off the holders before
    it deletes, so a delivery to a group someone still holds is a real double hold."""

    def __init__(self) -> None:
        self.holders: dict[str, int] = {}
        self.seen: defaultdict[str, list[int]] = defaultdict(list)
        self.violations: list[str] = []
        self.deleted = 0
        self.workers: set[int] = set()
        # deliveries made while another worker held a group: holds side by side
        self.overlaps = 0

    def received(self, worker: int, group: str, number: int) -> None:
        holder = self.holders.get(group)
        if holder is not None and holder != worker:
            self.violations.append(f"{group} delivered to {worker} while {holder} holds it")
        if any(other != worker for other in self.holders.values()):
            self.overlaps += 1
        self.holders[group] = worker
        self.seen[group].append(number)
        self.workers.add(worker)

    def released(self, worker: int, group: str) -> None:
        if self.holders.get(group) == worker:
            del self.holders[group]


def fifo_message(group: str, number: int) -> NewMessage:
    return NewMessage(
        id=str(uuid.uuid4()),
        body=f"{group}/{number}",
        group_id=group,
        deduplication_id=f"{group}/{number}",
    )


async def sender(store: PostgresQueueStore, groups: list[str]) -> None:
    """Sends its groups' messages in order, one round at a time."""
    for number in range(PER_GROUP):
        await store.send(QUEUE, [fifo_message(g, number) for g in groups], now=None)
        await asyncio.sleep(0)  # let the workers in between rounds


async def worker(store: PostgresQueueStore, me: int, ledger: Ledger, total: int) -> None:
    while ledger.deleted < total:
        batch = await store.receive(QUEUE, max_messages=10, visibility_timeout=600, now=None)
        if not batch:
            await asyncio.sleep(0.001)  # the senders are still at work: look again soon
            continue
        for delivery in batch:
            group, number = delivery.message.body.split("/")
            ledger.received(me, group, int(number))
        # "processing", as a worker's own I/O: a round trip to the database, during which
        # the other workers receive
        await store.stats(QUEUE, now=None)
        for group in {d.message.group_id for d in batch}:
            ledger.released(me, str(group))
        results = await store.delete(
            QUEUE, [d.receipt for d in batch], refuse_expired=True, now=None
        )
        assert all(r.outcome.value == "ok" for r in results)
        ledger.deleted += len(batch)


async def test_workers_never_hold_a_group_twice_and_see_each_group_in_order(
    open_store: StoreOpener,
) -> None:
    ledger = Ledger()
    total = len(GROUPS) * PER_GROUP
    size = WORKERS // 2 + SENDERS
    # Two stores: two "processes", each with its own pool, over one database.
    async with (
        open_store(min_size=2, max_size=size, listen=False) as one,
        open_store(min_size=2, max_size=size, listen=False) as two,
    ):
        await one.create_queue(QUEUE, QueueConfig(fifo=True), {}, now=None)
        chunk = len(GROUPS) // SENDERS
        await asyncio.gather(
            *(sender(one, GROUPS[s * chunk : (s + 1) * chunk]) for s in range(SENDERS)),
            *(worker(one if w % 2 else two, w, ledger, total) for w in range(WORKERS)),
        )
        stats = await one.stats(QUEUE, now=None)

    assert ledger.violations == []
    # The test is about concurrency: many workers took part, holding groups side by side.
    # (A receive takes each group's whole run, so one receive holds a group or two: the
    # holds that overlap are counted, not the groups one receive took.)
    assert len(ledger.workers) > WORKERS // 2 and ledger.overlaps > WORKERS
    assert {g: ledger.seen[g] for g in GROUPS} == {g: list(range(PER_GROUP)) for g in GROUPS}
    assert (stats.visible, stats.in_flight) == (0, 0)


async def test_concurrent_retries_of_one_deduplication_id_enqueue_one_message(
    open_store: StoreOpener,
) -> None:
    senders = 24
    async with open_store(min_size=12, max_size=12, listen=False) as store:
        await store.create_queue(QUEUE, QueueConfig(fifo=True), {}, now=None)
        for round_ in range(5):
            retries = [fifo_message("g", round_) for _ in range(senders)]
            results = await asyncio.gather(
                *(store.send(QUEUE, [message], now=None) for message in retries)
            )
            answers = [result for batch in results for result in batch]
            # Every retry names the one message and its sequence number; one created it.
            assert len({(r.message_id, r.sequence_number) for r in answers}) == 1
            assert sum(1 for r in answers if not r.duplicate) == 1
        delivered = await store.receive(QUEUE, max_messages=10, visibility_timeout=60, now=None)
    assert [d.message.body for d in delivered] == [f"g/{n}" for n in range(5)]


async def test_concurrent_fifo_sends_share_statements_each_with_its_own_answer(
    open_store: StoreOpener, database: str
) -> None:
    # Sixteen clients sending at once: the sends share statements (coalesce.py), as a
    # standard queue's do, and each still gets its own message's id and sequence number;
    # a deduplication id two of them share enqueues one message, the other send its
    # duplicate. (A statement's messages share its statement_timestamp() as their sent_at:
    # that is how the test counts statements.)
    async with open_store(min_size=16, max_size=16, listen=False) as store:
        await store.create_queue(QUEUE, QueueConfig(fifo=True), {}, now=None)
        sends = [[fifo_message(f"g{n % 4}", n)] for n in range(32)]
        sends.append([fifo_message("g0", 0)])  # a retry of the first, sent at once
        results = await asyncio.gather(*(store.send(QUEUE, s, now=None) for s in sends))
        connection = await asyncpg.connect(database, server_settings={"search_path": "hopper"})
        try:
            statements = await connection.fetchval(
                "SELECT count(DISTINCT sent_at) FROM messages"
            )
        finally:
            await connection.close()
        delivered = await store.receive(QUEUE, max_messages=10, visibility_timeout=60, now=None)

    answers = [batch[0] for batch in results]
    assert statements < len(sends) // 2
    assert [a.message_id for a in answers[:32]] == [s[0].id for s in sends[:32]]
    assert not any(a.duplicate for a in answers[:32])
    assert len({a.sequence_number for a in answers[:32]}) == 32
    assert (answers[32].message_id, answers[32].sequence_number, answers[32].duplicate) == (
        answers[0].message_id, answers[0].sequence_number, True
    )
    # each group's messages in the order their sequence numbers say
    by_group = [d for d in delivered if d.message.group_id == "g0"]
    assert [d.message.sequence_number for d in by_group] == sorted(
        d.message.sequence_number for d in by_group
    )


# Advisory locks of the test's own database awaited by its backends.
ADVISORY_WAITS = """
    SELECT count(*) FROM pg_locks
    WHERE locktype = 'advisory' AND NOT granted
      AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
"""


# send_fifo_messages, and send_messages (a FIFO queue with a depth ceiling)
@pytest.mark.parametrize("max_depth", [None, 100])
async def test_a_fifo_send_not_yet_committed_holds_the_queue_s_later_sends(
    open_store: StoreOpener, database: str, max_depth: int | None
) -> None:
    # FIFO sends of a queue commit in the order of the seqs they took. Were the later
    # send committed first, a receive between the two would claim its message as the
    # group's head, and the earlier one, committed next, would become the head and be
    # delivered beside it: the group held twice, out of order. (The store runs two
    # statements of a queue's sends at once: coalesce.py.)
    async with open_store(min_size=2, max_size=2, listen=False) as store:
        await store.create_queue(QUEUE, QueueConfig(fifo=True), {}, now=None)
        connection = await asyncpg.connect(database, server_settings={"search_path": SCHEMA})
        monitor = await asyncpg.connect(database)
        try:
            early = PostgresQueueStore.on_connection(connection, schema=SCHEMA)
            transaction = connection.transaction()
            await transaction.start()
            await early.send(QUEUE, [fifo_message("g", 0)], now=None, max_depth=max_depth)
            later = asyncio.create_task(
                store.send(QUEUE, [fifo_message("g", 1)], now=None, max_depth=max_depth)
            )
            deadline = time.monotonic() + 10
            while not await monitor.fetchval(ADVISORY_WAITS):
                assert not later.done(), "the later send did not wait for the earlier one"
                assert time.monotonic() < deadline, "no send waited for its turn"
                await asyncio.sleep(0.002)
            # its turn comes with the earlier send's commit, not before
            assert await store.receive(QUEUE, max_messages=1, visibility_timeout=60, now=None) == []
            await transaction.commit()
            (sent,) = await later
        finally:
            await connection.close()
            await monitor.close()
        delivered = await store.receive(QUEUE, max_messages=10, visibility_timeout=60, now=None)
    assert [d.message.body for d in delivered] == ["g/0", "g/1"]
    assert delivered[1].message.sequence_number == sent.sequence_number
    assert delivered[0].message.sequence_number < sent.sequence_number  # type: ignore[operator]


async def test_concurrent_retries_of_one_receive_attempt_get_one_batch(
    open_store: StoreOpener,
) -> None:
    retries = 12
    async with open_store(min_size=retries, max_size=retries, listen=False) as store:
        await store.create_queue(QUEUE, QueueConfig(fifo=True), {}, now=None)
        await store.send(QUEUE, [fifo_message(g, 0) for g in GROUPS[:20]], now=None)
        batches = await asyncio.gather(
            *(
                store.receive(
                    QUEUE, max_messages=10, visibility_timeout=60, now=None, attempt_id="same"
                )
                for _ in range(retries)
            )
        )
        other = await store.receive(QUEUE, max_messages=10, visibility_timeout=60, now=None)
    answers = {tuple((d.message.id, d.token) for d in batch) for batch in batches}
    assert len(answers) == 1 and len(batches[0]) == 10
    # The retries claimed nothing more: the other ten groups are still there.
    assert len(other) == 10
    assert {d.message.id for d in other}.isdisjoint(d.message.id for d in batches[0])


async def test_concurrent_receivers_take_whole_runs_in_the_order_groups_became_available(
    open_store: StoreOpener,
) -> None:
    # Twenty groups of three, all received once and then released group by group in a
    # shuffled order: that order is when each group's run became available again. Eight
    # receivers on two pools then take the queue apart at once. Claims of one queue take
    # turns, and each draws its tokens after the one before, so sorting the claims by
    # token gives the order the queue handed them out in: each group's run whole, to one
    # receiver, in sequence order, and the groups in the order they were released.
    groups = GROUPS[:20]
    per_group = 3
    released = random.Random(17).sample(groups, len(groups))
    batches: list[tuple[int, list[Delivery]]] = []

    async def receiver(store: PostgresQueueStore, me: int) -> None:
        while sum(len(batch) for _, batch in batches) < len(groups) * per_group:
            batch = await store.receive(
                QUEUE, max_messages=per_group * (1 + me % 2), visibility_timeout=600, now=None
            )
            if batch:
                batches.append((me, batch))
            await asyncio.sleep(0)  # let the other receivers in

    async with (
        open_store(min_size=2, max_size=6, listen=False) as one,
        open_store(min_size=2, max_size=6, listen=False) as two,
    ):
        await one.create_queue(QUEUE, QueueConfig(fifo=True), {}, now=None)
        await one.send(
            QUEUE, [fifo_message(g, n) for g in groups for n in range(per_group)], now=None
        )
        first: list[Delivery] = []
        while len(first) < len(groups) * per_group:
            # whole groups at a time: a group cut short would hold its rest back
            first += await one.receive(
                QUEUE, max_messages=per_group * 3, visibility_timeout=600, now=None
            )
        by_group = {g: [d for d in first if d.message.group_id == g] for g in groups}
        for group in released:
            changes = [VisibilityChange(d.receipt, 0) for d in by_group[group]]
            await one.change_visibility(QUEUE, changes, refuse_expired=True, now=None)
        await asyncio.gather(*(receiver(one if w % 2 else two, w) for w in range(8)))

    # A claim's tokens are drawn together: the batches in claim order, each as answered.
    claims = sorted(batches, key=lambda claim: min(d.token for d in claim[1]))
    order = [d.message.body for _, batch in claims for d in batch]
    assert order == [f"{g}/{n}" for g in released for n in range(per_group)]
    holders = {g: {me for me, batch in claims for d in batch if d.message.group_id == g}
               for g in groups}
    assert all(len(holder) == 1 for holder in holders.values())
    assert len({me for me, _ in batches}) > 1


async def waiting_for_a_lock(connection: asyncpg.Connection) -> None:
    """Until some backend waits for an advisory lock (a receive's turn, in another
    process, that the test holds back)."""
    async with asyncio.timeout(10):
        while not await connection.fetchval(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
        ):
            await asyncio.sleep(0.005)


async def test_a_receive_claims_only_after_the_turn_before_it_committed(
    open_store: StoreOpener, database: str
) -> None:
    # Another process's turn holds the queue's receive lock and claims the queue's one
    # message. A receive here waits for the lock, and what it claims it reads after that
    # turn committed: it finds the group in flight and claims nothing (had it read the
    # queue before it had the lock, it would have seen the message receivable, and
    # delivered it a second time).
    other = await asyncpg.connect(
        database, server_settings={"search_path": "hopper", "plan_cache_mode": "force_generic_plan"}
    )
    try:
        async with open_store(listen=False) as store:
            await store.create_queue(QUEUE, QueueConfig(fifo=True), {}, now=None)
            await store.send(QUEUE, [fifo_message("g0", 0)], now=None)
            turn = other.transaction()
            await turn.start()
            await other.execute("SELECT pg_advisory_xact_lock($1::int8)", receive_lock(QUEUE))
            receive = asyncio.create_task(
                store.receive(QUEUE, max_messages=10, visibility_timeout=600, now=None)
            )
            await waiting_for_a_lock(other)
            assert not receive.done()
            claimed = await other.fetch(
                queries()["receive_fifo_messages"],
                QUEUE.account, QUEUE.name, None, 10, 600.0, [], 0, None,
            )
            assert [row["body"] for row in claimed] == ["g0/0"]
            await turn.commit()
            assert await receive == []
    finally:
        await other.close()
