"""The two receipt modes over every store (core/outcomes.py): strict refuses a
superseded receipt; AWS mode answers it as AWS does, acting on the message's current
delivery. The rule is the core's, so each store runs it unchanged."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from hopper.core.clock import FakeClock
from hopper.core.errors import MessageNotAvailable, ReceiptExpired, StaleReceipt
from hopper.core.model import Delivery, MessageDraft, QueueKey, VisibilityChange
from hopper.core.outcomes import ReceiptMode
from hopper.core.service import QueueService
from hopper.core.store import QueueStore

from .factories import key

QUEUE = key("q")
FIFO = key("q.fifo")


@pytest.fixture
async def aws(store: QueueStore, clock: FakeClock) -> AsyncIterator[QueueService]:
    """The core over each store in AWS receipt mode."""
    yield QueueService(store, clock=clock, poll_fallback_seconds=30.0, receipts=ReceiptMode.AWS)


async def one_message(service: QueueService, queue: QueueKey = QUEUE) -> None:
    fifo = {"fifo": True} if queue.is_fifo else {}
    await service.create_queue(queue, fifo, {})
    draft = MessageDraft("m", group_id="g", deduplication_id="d") if fifo else MessageDraft("m")
    await service.send(queue, draft)


async def receive(service: QueueService, lease: float, queue: QueueKey = QUEUE) -> Delivery:
    [delivery] = await service.receive(queue, max_messages=1, visibility_timeout=lease)
    return delivery


async def two_deliveries(
    service: QueueService, clock: FakeClock, queue: QueueKey = QUEUE
) -> tuple[Delivery, Delivery]:
    """The message received twice: the first receipt is superseded by the second."""
    await one_message(service, queue)
    first = await receive(service, 1, queue)
    clock.advance(1)
    return first, await receive(service, 60, queue)


async def test_aws_mode_a_superseded_change_visibility_applies_to_the_current_lease(
    aws: QueueService, clock: FakeClock
) -> None:
    # Recorded on AWS: receive with VisibilityTimeout 0 gives R1, a second receive with
    # VisibilityTimeout 3 gives R2, ChangeMessageVisibility(R1, 0) makes the message
    # visible at once.
    await one_message(aws)
    r1 = await receive(aws, 0)
    r2 = await receive(aws, 3)
    await aws.change_visibility(QUEUE, VisibilityChange(r1.receipt, 0))
    again = await receive(aws, 30)
    assert again.message.id == r1.message.id
    # The fencing token is issued as in strict mode: each delivery's is greater.
    assert r1.token < r2.token < again.token


async def test_aws_mode_a_superseded_delete_succeeds_and_deletes(
    aws: QueueService, clock: FakeClock
) -> None:
    old, new = await two_deliveries(aws, clock)
    await aws.delete(QUEUE, old.receipt)
    stats = await aws.queue_stats(QUEUE)
    assert (stats.visible, stats.in_flight) == (0, 0)
    # The newer receipt's delete finds the message gone: a success, as on AWS.
    await aws.delete(QUEUE, new.receipt)


async def test_aws_mode_batches_answer_superseded_entries_as_the_single_calls_do(
    aws: QueueService, clock: FakeClock
) -> None:
    old, _ = await two_deliveries(aws, clock)
    [changed] = await aws.change_visibility_batch(QUEUE, [VisibilityChange(old.receipt, 0)])
    assert changed is None
    [deleted] = await aws.delete_batch(QUEUE, [old.receipt])
    assert deleted is None
    assert (await aws.queue_stats(QUEUE)).visible == 0


async def test_aws_mode_a_superseded_change_of_a_deleted_message_is_not_available(
    aws: QueueService, clock: FakeClock
) -> None:
    old, new = await two_deliveries(aws, clock)
    await aws.delete(QUEUE, new.receipt)
    with pytest.raises(MessageNotAvailable):
        await aws.change_visibility(QUEUE, VisibilityChange(old.receipt, 0))


async def test_aws_mode_a_superseded_fifo_receipt_is_expired_and_deletes_nothing(
    aws: QueueService, clock: FakeClock
) -> None:
    # A FIFO receipt is superseded only once its lease ended, and AWS refuses an expired
    # FIFO receipt ("The receipt handle has expired.").
    old, new = await two_deliveries(aws, clock, FIFO)
    with pytest.raises(ReceiptExpired):
        await aws.delete(FIFO, old.receipt)
    with pytest.raises(ReceiptExpired):
        await aws.change_visibility(FIFO, VisibilityChange(old.receipt, 0))
    assert (await aws.queue_stats(FIFO)).in_flight == 1
    await aws.delete(FIFO, new.receipt)


async def test_strict_mode_refuses_what_aws_mode_accepts(
    service: QueueService, clock: FakeClock
) -> None:
    old, new = await two_deliveries(service, clock)
    with pytest.raises(StaleReceipt) as caught:
        await service.change_visibility(QUEUE, VisibilityChange(old.receipt, 0))
    assert caught.value.current == new.token
    with pytest.raises(StaleReceipt):
        await service.delete(QUEUE, old.receipt)
    assert (await service.queue_stats(QUEUE)).in_flight == 1
