"""FIFO sends to one JetStream queue that arrive together go in one round
(sends.FifoSends): their deduplication ids created at once, one publish, one record.
JetStream-only: rounds are this store's own way to its backlog; the contract suite
says what every store answers, this that sends sharing a round keep those answers.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pytest

from hopper.core.clock import FakeClock
from hopper.core.model import Delivery, NewMessage, QueueConfig, QueueKey, Receipt
from hopper.store.jetstream import JetStreamQueueStore

from .servers import one_node
from .stores import drop_prefix

KEY = QueueKey("000000000000", "rounds.fifo")


def _ignore(key: QueueKey, count: int | None = None) -> None:
    pass


def _message(body: str, group: str, dedup: str) -> NewMessage:
    return NewMessage(id=str(uuid.uuid4()), body=body, group_id=group, deduplication_id=dedup)


@pytest.fixture
async def store() -> AsyncIterator[JetStreamQueueStore]:
    prefix = f"t{uuid.uuid4().hex[:12]}"
    store = JetStreamQueueStore([one_node().url], prefix=prefix, clock=FakeClock())
    await store.start(_ignore)
    await store.create_queue(KEY, QueueConfig(fifo=True), {}, now=1000.0)
    try:
        yield store
    finally:
        await store.close()
        await drop_prefix(one_node().url, prefix)


async def _entries(store: JetStreamQueueStore) -> int:
    res = store._p.backlog._res
    return (await res.js.stream_info(res.body_stream)).state.last_seq


async def _drain(store: JetStreamQueueStore) -> list[Delivery]:
    seen: list[Delivery] = []
    while got := await store.receive(KEY, max_messages=10, visibility_timeout=30, now=1000.0):
        seen += got
        receipts = [Receipt(d.message.id, d.token) for d in got]
        await store.delete(KEY, receipts, refuse_expired=False, now=1000.0)
    return seen


async def test_concurrent_fifo_sends_share_publishes_and_keep_each_group_in_order(
    store: JetStreamQueueStore,
) -> None:
    before = await _entries(store)
    # when 64 senders send one message each at once, over four groups
    sends = [
        store.send(KEY, [_message(f"m{i}", f"g{i % 4}", f"d{i}")], now=1000.0) for i in range(64)
    ]
    results = [one for result in await asyncio.gather(*sends) for one in result]
    # then each was answered as enqueued, with its own sequence number, in fewer
    # publishes than sends
    assert not any(r.duplicate for r in results)
    numbers = [r.sequence_number for r in results]
    assert len(set(numbers)) == 64 and None not in numbers
    assert 1 <= await _entries(store) - before < 64
    # and each group is delivered once, in the order of its sequence numbers
    seen = await _drain(store)
    assert sorted(d.message.body for d in seen) == sorted(f"m{i}" for i in range(64))
    for group in range(4):
        mine = [d.message.sequence_number or 0 for d in seen if d.message.group_id == f"g{group}"]
        assert mine == sorted(mine) and len(mine) == 16


async def test_concurrent_sends_of_one_deduplication_id_enqueue_one_message(
    store: JetStreamQueueStore,
) -> None:
    # when 16 senders send one deduplication id at once, among other sends
    same = [store.send(KEY, [_message("same", "g", "dup")], now=1000.0) for _ in range(16)]
    other = [store.send(KEY, [_message(f"o{i}", "g", f"o{i}")], now=1000.0) for i in range(16)]
    results = await asyncio.gather(*same, *other)
    answers = [result[0] for result in results[:16]]
    # then one was enqueued, and every other answers its MessageId and SequenceNumber
    enqueued = [a for a in answers if not a.duplicate]
    assert len(enqueued) == 1
    assert {(a.message_id, a.sequence_number) for a in answers} == {
        (enqueued[0].message_id, enqueued[0].sequence_number)
    }
    # and the queue holds it once among the others
    bodies = sorted(d.message.body for d in await _drain(store))
    assert bodies == sorted(["same", *(f"o{i}" for i in range(16))])


async def test_a_duplicate_within_one_batch_of_a_round_answers_the_first(
    store: JetStreamQueueStore,
) -> None:
    # when a batch repeating an id goes in a round with another send
    batch = [_message("a", "g", "x"), _message("b", "g", "x"), _message("c", "h", "y")]
    first, second = await asyncio.gather(
        store.send(KEY, batch, now=1000.0), store.send(KEY, [_message("z", "g", "z")], now=1000.0)
    )
    # then its repeat answers the first's MessageId and SequenceNumber
    assert [r.duplicate for r in first] == [False, True, False]
    assert first[1].message_id == batch[0].id
    assert first[1].sequence_number == first[0].sequence_number
    assert not second[0].duplicate
    # and the sequence numbers follow the order the sends came in
    numbers = [first[0].sequence_number, first[2].sequence_number, second[0].sequence_number]
    assert numbers == sorted(numbers)
