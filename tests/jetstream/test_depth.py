"""The JetStream store has no depth limit: a queue deeper than its ledger's window
(10,000 messages and more) takes every send and gives every message back, while the
ledger, the one entry each receive reads and writes, stays as small as what is in
flight. JetStream-only: the ledger and its window are this store's own (the contract
suite says what every store does; this says what keeps this one's cost level).
"""

from __future__ import annotations

import asyncio
import uuid

import pytest

from hopper.core import rounds
from hopper.core.clock import FakeClock
from hopper.core.model import Delivery, NewMessage, QueueConfig, QueueKey, Receipt
from hopper.store.jetstream import JetStreamQueueStore, edge
from hopper.store.jetstream.sends import entry

from .servers import one_node
from .stores import drop_prefix, jetstream_store

DEPTH = 11_000


def _ignore(key: QueueKey, count: int | None = None) -> None:
    pass


async def _ledger_size(store: JetStreamQueueStore, key: QueueKey) -> int:
    loaded = await store._p.steps.load(key, take=False)
    assert loaded is not None
    return len(loaded.raw or b"")


def _message(i: int, fifo: bool) -> NewMessage:
    if not fifo:
        return NewMessage(id=str(uuid.uuid4()), body=f"m{i}")
    return NewMessage(
        id=str(uuid.uuid4()), body=f"m{i}", group_id=f"g{i % 10}", deduplication_id=f"d{i}"
    )


async def _fill(store: JetStreamQueueStore, key: QueueKey, clock: FakeClock, fifo: bool) -> None:
    for start in range(0, DEPTH, 500):
        batches = [
            [_message(i, fifo) for i in range(j, j + 10)]
            for j in range(start, min(start + 500, DEPTH), 10)
        ]
        await asyncio.gather(*(store.send(key, b, now=clock.now()) for b in batches))


async def _drain(
    store: JetStreamQueueStore, key: QueueKey, clock: FakeClock
) -> tuple[list[Delivery], int]:
    """Every delivery, in order, and the largest ledger seen on the way."""
    seen: list[Delivery] = []
    largest = 0
    while True:
        got = await store.receive(key, max_messages=10, visibility_timeout=30, now=clock.now())
        if not got:
            return seen, largest
        seen += got
        receipts = [Receipt(d.message.id, d.token) for d in got]
        await store.delete(key, receipts, refuse_expired=False, now=clock.now())
        largest = max(largest, await _ledger_size(store, key))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["deep", "deep.fifo"])
async def test_a_queue_deeper_than_the_old_limit_drains_whole_with_a_small_ledger(
    name: str,
) -> None:
    clock = FakeClock()
    prefix = f"t{uuid.uuid4().hex[:12]}"
    store = JetStreamQueueStore([one_node().url], prefix=prefix, clock=clock)
    await store.start(_ignore)
    fifo = name.endswith(".fifo")
    try:
        key = QueueKey("000000000000", name)
        config = QueueConfig(fifo=True) if fifo else QueueConfig()
        await store.create_queue(key, config, {}, now=clock.now())
        # given a queue holding more messages than the old one-entry limit (10,000)
        await _fill(store, key, clock, fifo)
        assert (await store.stats(key, now=clock.now())).visible == DEPTH
        # when it is drained ten at a time
        seen, largest = await _drain(store, key, clock)
        # then every message came back once (a FIFO group's in order), and the ledger
        # never held the backlog
        assert sorted(d.message.body for d in seen) == sorted(f"m{i}" for i in range(DEPTH))
        if fifo:
            for group in range(10):
                mine = [
                    d.message.sequence_number for d in seen if d.message.group_id == f"g{group}"
                ]
                assert mine == sorted(mine)
        # what is in flight and the next 100 read ahead, about 165 bytes each
        assert largest < 64 * 1024, largest
        assert (await store.stats(key, now=clock.now())).visible == 0
    finally:
        await store.close()
        await drop_prefix(one_node().url, prefix)


async def test_receives_wait_while_the_ledger_holds_its_window_in_flight() -> None:
    """The declared difference (README, "The JetStream store"): a queue serves at most
    its ledger's window in flight (5,000 by default; SQS allows 120,000), and the
    backlog behind them as they leave. A window of 30 here, to see it quickly."""
    clock = FakeClock()
    prefix = f"t{uuid.uuid4().hex[:12]}"
    store = JetStreamQueueStore([one_node().url], prefix=prefix, clock=clock, window=30)
    await store.start(_ignore)
    try:
        key = QueueKey("000000000000", "windowed")
        await store.create_queue(key, QueueConfig(), {}, now=clock.now())
        for i in range(100):
            await store.send(key, [_message(i, fifo=False)], now=clock.now())
        # given the window's worth of messages in flight
        held = []
        for _ in range(10):
            held += await store.receive(
                key, max_messages=10, visibility_timeout=600, now=clock.now()
            )
        assert len(held) == 30
        # when ten of them are deleted
        receipts = [Receipt(d.message.id, d.token) for d in held[:10]]
        await store.delete(key, receipts, refuse_expired=False, now=clock.now())
        # then ten more of the backlog are served, and no more
        more = []
        for _ in range(3):
            more += await store.receive(
                key, max_messages=10, visibility_timeout=600, now=clock.now()
            )
        assert len(more) == 10
        assert (await store.stats(key, now=clock.now())).in_flight == 30
    finally:
        await store.close()
        await drop_prefix(one_node().url, prefix)


async def test_concurrent_plain_sends_share_publishes_and_each_is_stored_once() -> None:
    """Plain sends to one queue that arrive while its publish is on its way go in its
    next one (Backlog.publish_gathered): fewer backlog entries than sends, every
    message once."""
    clock = FakeClock()
    async with jetstream_store(clock) as store:
        key = QueueKey("000000000000", "gathered")
        await store.create_queue(key, QueueConfig(), {}, now=clock.now())
        js = store._p.backlog._res.js
        stream = store._p.backlog._res.body_stream
        before = (await js.stream_info(stream)).state.last_seq
        # when 64 senders send one message each at once
        sends = [store.send(key, [_message(i, fifo=False)], now=clock.now()) for i in range(64)]
        results = await asyncio.gather(*sends)
        # then each was answered for its own message, in fewer publishes than sends
        assert all(len(result) == 1 for result in results)
        entries = (await js.stream_info(stream)).state.last_seq - before
        assert 1 <= entries < 64, entries
        # and the queue holds each message once
        seen, _ = await _drain(store, key, clock)
        assert sorted(d.message.body for d in seen) == sorted(f"m{i}" for i in range(64))


@pytest.fixture
def patient_rounds(monkeypatch: pytest.MonkeyPatch) -> None:
    """A round's pause bounded by nothing the machine's load can reach (core/rounds.py caps
    it at a few ms, which a loaded machine's callers may take to come back): the tests
    below assert who waits for whom, not how long."""
    monkeypatch.setattr(rounds, "MAX_SECONDS", 60.0)
    monkeypatch.setattr(rounds, "ROUND_TRIPS", 1e9)


async def test_senders_a_publish_answered_go_together_in_the_next(patient_rounds: None) -> None:
    """After a publish that carried several sends, the queue's next publish waits for
    their senders to send again (core/rounds.py): a send that arrived while it was
    on its way goes with them, not alone, so concurrent senders do not split into
    halves taking turns."""
    clock = FakeClock()
    async with jetstream_store(clock) as store:
        key = QueueKey("000000000000", "regathered")
        await store.create_queue(key, QueueConfig(), {}, now=clock.now())
        found = await store._p.records.find(key)
        assert found is not None
        incarnation = found[1]
        backlog = store._p.backlog
        js, stream = backlog._res.js, backlog._res.body_stream
        before = (await js.stream_info(stream)).state.last_seq

        async def twice(i: int) -> None:
            for n in (i, i + 2):
                await backlog.publish_gathered(
                    incarnation, [entry(_message(n, fifo=False), clock.now())]
                )

        # when two senders' first sends are on their way, in one publish
        senders = [asyncio.create_task(twice(i)) for i in range(2)]
        while not backlog._gathering or backlog._gathered:
            await asyncio.sleep(0)  # a turn of the loop: the publish took both
        # and a third send arrives meanwhile
        third = backlog.publish_gathered(incarnation, [entry(_message(4, fifo=False), clock.now())])
        await asyncio.gather(third, *senders)
        # then it went with the two senders' second sends: two publishes, not three
        assert (await js.stream_info(stream)).state.last_seq - before == 2
        seen, _ = await _drain(store, key, clock)
        assert sorted(d.message.body for d in seen) == [f"m{i}" for i in range(5)]


async def test_steps_a_group_commit_answered_go_together_in_the_next(
    patient_rounds: None,
) -> None:
    """After a group commit of several steps, the queue's next group waits for their
    callers to be back (Steps._lead, core/rounds.py): a step that arrived while it was on its
    way goes with their next steps, not alone in a ledger write of its own."""
    clock = FakeClock()
    async with jetstream_store(clock) as store:
        key = QueueKey("000000000000", "regrouped")
        await store.create_queue(key, QueueConfig(), {}, now=clock.now())
        await store.send(key, [_message(i, fifo=False) for i in range(10)], now=clock.now())
        found = await store._p.records.find(key)
        assert found is not None
        steps, ledgers = store._p.steps, store._p.res.ledgers
        _, before = await edge.get(ledgers, found[1])

        async def twice() -> list[Delivery]:
            got: list[Delivery] = []
            for _ in range(2):  # each receive a step that claims: a ledger write
                got += await store.receive(
                    key, max_messages=1, visibility_timeout=30, now=clock.now()
                )
            return got

        # when four callers' first steps are on their way, in one group
        callers = [asyncio.create_task(twice()) for _ in range(4)]
        while not steps._leaders or steps._waiting:
            await asyncio.sleep(0)  # a turn of the loop: the group took all four
        # and a fifth step arrives meanwhile
        fifth = store.receive(key, max_messages=1, visibility_timeout=30, now=clock.now())
        got = await asyncio.gather(fifth, *callers)
        # then it went with the four callers' second steps: two ledger writes, not three
        _, after = await edge.get(ledgers, found[1])
        assert after - before == 2
        assert len({d.message.id for ds in got for d in ds}) == 9


async def test_a_step_waiting_out_a_pause_hears_the_store_close(patient_rounds: None) -> None:
    """A step that arrived during the pause after a group commit is cancelled when the
    store closes, as the steps of a group under way are: its caller does not wait for
    ever."""
    clock = FakeClock()
    async with jetstream_store(clock) as store:
        key = QueueKey("000000000000", "paused")
        await store.create_queue(key, QueueConfig(), {}, now=clock.now())
        await store.send(key, [_message(i, fifo=False) for i in range(10)], now=clock.now())
        steps = store._p.steps

        def receive() -> asyncio.Task[list[Delivery]]:
            return asyncio.create_task(
                store.receive(key, max_messages=1, visibility_timeout=30, now=clock.now())
            )

        # when four steps were committed together, and their callers are not back
        await asyncio.gather(*(receive() for _ in range(4)))
        assert steps._regather._awaited  # the queue's next group pauses for them
        # and a fifth arrives during the pause
        fifth = receive()
        while not steps._waiting:
            await asyncio.sleep(0)
        await store.close()
        # then its caller hears the close
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(fifth, 5)
