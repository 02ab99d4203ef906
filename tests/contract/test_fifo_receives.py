"""FIFO receives over every store: order and group locks within one receive and across
receives, receipts (expired, superseded), and receive attempt ids."""

from __future__ import annotations

import asyncio

import pytest

from hopper.core.clock import FakeClock
from hopper.core.errors import InvalidParameter, ReceiptExpired, StaleReceipt
from hopper.core.model import Delivery, MessageDraft, VisibilityChange
from hopper.core.service import QueueService

from .factories import key

QUEUE = key("q.fifo")


async def fifo_queue(service: QueueService, *groups: str) -> None:
    """A FIFO queue holding one message per entry of `groups`, bodies m0, m1, ..."""
    await service.create_queue(QUEUE, {"fifo": True}, {})
    await send(service, *groups)


async def send(service: QueueService, *groups: str, first: int = 0) -> None:
    drafts = [
        MessageDraft(f"m{n}", group_id=g, deduplication_id=f"d{n}")
        for n, g in enumerate(groups, start=first)
    ]
    for start in range(0, len(drafts), 10):
        await service.send_batch(QUEUE, drafts[start : start + 10])


async def receive(
    service: QueueService, n: int = 10, lease: float = 30, attempt: str | None = None
) -> list[Delivery]:
    return await service.receive(
        QUEUE, max_messages=n, visibility_timeout=lease, attempt_id=attempt
    )


def bodies(deliveries: list[Delivery]) -> list[str]:
    return [d.message.body for d in deliveries]


# --- order and group locks ---------------------------------------------------------------


async def test_one_receive_returns_several_messages_of_a_group_in_order(
    service: QueueService,
) -> None:
    await fifo_queue(service, "a", "b", "a", "a", "b")
    deliveries = await receive(service)
    # Group a's whole run, then group b's (SQS-NOTES 5.11).
    assert bodies(deliveries) == ["m0", "m2", "m3", "m1", "m4"]
    numbers = [d.message.sequence_number or 0 for d in deliveries]
    assert numbers[0] < numbers[1] < numbers[2] and numbers[3] < numbers[4]


async def test_a_group_stays_locked_until_every_message_in_flight_is_deleted(
    service: QueueService,
) -> None:
    await fifo_queue(service, "g", "g", "g")
    first, second = await receive(service, n=2)
    await service.delete(QUEUE, first.receipt)
    assert await receive(service) == []
    await service.delete(QUEUE, second.receipt)
    assert bodies(await receive(service)) == ["m2"]


async def test_a_lease_extended_keeps_the_group_locked(
    service: QueueService, clock: FakeClock
) -> None:
    await fifo_queue(service, "g", "g")
    [head] = await receive(service, n=1, lease=10)
    await service.change_visibility(QUEUE, VisibilityChange(head.receipt, 60))
    clock.advance(59.999)
    assert await receive(service) == []
    clock.advance(0.001)
    assert bodies(await receive(service)) == ["m0", "m1"]


async def test_a_released_head_is_delivered_again_before_the_rest_of_its_group(
    service: QueueService,
) -> None:
    await fifo_queue(service, "g", "g", "h")
    [head] = await receive(service, n=1)
    assert bodies(await receive(service)) == ["m2"]
    await service.change_visibility(QUEUE, VisibilityChange(head.receipt, 0))
    again = await receive(service)
    assert bodies(again) == ["m0", "m1"]
    assert again[0].token > head.token and again[0].receive_count == 2


async def test_a_delayed_head_holds_back_its_group(service: QueueService, clock: FakeClock) -> None:
    await service.create_queue(QUEUE, {"fifo": True, "delay_seconds": 10.0}, {})
    await send(service, "g")
    await service.set_queue_attributes(QUEUE, {"delay_seconds": 0.0})
    await send(service, "g", "h", first=1)
    assert bodies(await receive(service)) == ["m2"]
    clock.advance(10)
    assert bodies(await receive(service)) == ["m0", "m1"]


# --- receipts ------------------------------------------------------------------------------


async def test_an_expired_receipt_is_refused_from_its_deadline_on(
    service: QueueService, clock: FakeClock
) -> None:
    await fifo_queue(service, "g", "h")
    one, two = await receive(service, lease=10)
    clock.advance(9.999)
    await service.delete(QUEUE, one.receipt)
    clock.advance(0.001)
    with pytest.raises(ReceiptExpired):
        await service.delete(QUEUE, two.receipt)
    with pytest.raises(ReceiptExpired):
        await service.change_visibility(QUEUE, VisibilityChange(two.receipt, 30))
    # Nothing was deleted: the message is delivered again.
    assert bodies(await receive(service)) == ["m1"]


async def test_a_superseded_receipt_is_refused_and_tokens_increase(
    service: QueueService, clock: FakeClock
) -> None:
    await fifo_queue(service, "g")
    tokens = []
    for _ in range(3):
        [delivery] = await receive(service, lease=1)
        tokens.append(delivery.token)
        clock.advance(1)
    assert tokens == sorted(set(tokens))
    [current] = await receive(service)
    with pytest.raises(StaleReceipt) as caught:
        await service.delete(QUEUE, delivery.receipt)
    assert caught.value.current == current.token
    await service.delete(QUEUE, current.receipt)


# --- receive attempt ids --------------------------------------------------------------------


async def test_a_retried_attempt_returns_the_same_deliveries_with_a_fresh_lease(
    service: QueueService, clock: FakeClock
) -> None:
    await fifo_queue(service, "g", "g", "h")
    first = await receive(service, n=2, lease=30, attempt="try-1")
    clock.advance(20)
    again = await receive(service, n=10, lease=30, attempt="try-1")
    assert [(d.message.id, d.token, d.receive_count) for d in again] == [
        (d.message.id, d.token, d.receive_count) for d in first
    ]
    assert [d.visible_at for d in again] == [clock.time() + 30] * 2
    # The lease really was reset: still locked when the first lease would have ended.
    clock.advance(29.999)
    assert bodies(await receive(service)) == ["m2"]
    await service.delete(QUEUE, again[0].receipt)
    await service.delete(QUEUE, first[1].receipt)


async def test_a_retried_attempt_that_long_polls_is_replayed_at_once(
    service: QueueService,
) -> None:
    await fifo_queue(service, "g")
    first = await receive(service, n=1, attempt="try-1")
    # Another long poll finds the queue empty (its one group is locked) and waits.
    other = asyncio.create_task(service.receive(QUEUE, max_messages=1, wait_time=20))
    async with asyncio.timeout(5):
        while not service.wakeups.known_empty(QUEUE):
            await asyncio.sleep(0)
        again = await service.receive(
            QUEUE, max_messages=1, visibility_timeout=30, wait_time=20, attempt_id="try-1"
        )
    assert [d.token for d in again] == [d.token for d in first]
    other.cancel()
    await asyncio.gather(other, return_exceptions=True)


async def test_an_attempt_can_be_retried_until_five_minutes_after_it(
    service: QueueService, clock: FakeClock
) -> None:
    await fifo_queue(service, "g", "g")
    [first] = await receive(service, n=1, lease=600, attempt="a")
    clock.advance(299.999)
    assert [d.token for d in await receive(service, n=1, lease=600, attempt="a")] == [first.token]
    clock.advance(0.001)
    # The window is over: a receive like any other, and the group is locked.
    assert await receive(service, n=1, attempt="a") == []


async def test_an_attempt_is_spent_once_a_message_of_it_is_deleted(
    service: QueueService,
) -> None:
    await fifo_queue(service, "g", "h", "h")
    first = await receive(service, n=2, attempt="a")
    await service.delete(QUEUE, first[0].receipt)
    # No replay: a fresh receive, which may deliver the rest of the queue.
    assert await receive(service, attempt="a") == []
    await service.delete(QUEUE, first[1].receipt)
    assert bodies(await receive(service, attempt="a")) == ["m2"]


async def test_an_attempt_is_spent_once_a_visibility_of_it_changed(
    service: QueueService,
) -> None:
    await fifo_queue(service, "g")
    [first] = await receive(service, attempt="a")
    await service.change_visibility(QUEUE, VisibilityChange(first.receipt, 0))
    [fresh] = await receive(service, attempt="a")
    assert fresh.token > first.token and fresh.receive_count == 2


async def test_an_attempt_whose_lease_ran_out_is_replayed_until_another_receive(
    service: QueueService, clock: FakeClock
) -> None:
    await fifo_queue(service, "g")
    [first] = await receive(service, lease=10, attempt="a")
    clock.advance(10)
    [replayed] = await receive(service, lease=10, attempt="a")
    assert (replayed.token, replayed.receive_count) == (first.token, 1)
    clock.advance(10)
    [other] = await receive(service, lease=10)
    assert other.token > first.token
    # Delivered again to someone else: the attempt's messages changed.
    assert await receive(service, attempt="a") == []


async def test_an_empty_receive_is_not_remembered(service: QueueService) -> None:
    await fifo_queue(service)
    assert await receive(service, attempt="a") == []
    await send(service, "g")
    assert bodies(await receive(service, attempt="a")) == ["m0"]


async def test_attempts_are_independent_per_id_and_per_queue(service: QueueService) -> None:
    await fifo_queue(service, "g", "h")
    await service.create_queue(key("other.fifo"), {"fifo": True}, {})
    await service.send(key("other.fifo"), MessageDraft("x", group_id="g", deduplication_id="d"))
    [a] = await receive(service, n=1, attempt="a")
    [b] = await receive(service, n=1, attempt="b")
    [x] = await service.receive(key("other.fifo"), attempt_id="a")
    assert (a.message.body, b.message.body, x.message.body) == ("m0", "m1", "x")
    assert [d.token for d in await receive(service, attempt="a")] == [a.token]


async def test_a_long_poll_with_a_known_attempt_answers_at_once(service: QueueService) -> None:
    await fifo_queue(service, "g")
    [first] = await receive(service, attempt="a")
    [again] = await service.receive(QUEUE, wait_time=20, attempt_id="a")
    assert again.token == first.token


async def test_standard_queues_ignore_attempt_ids(service: QueueService) -> None:
    await service.create_queue(key("q"), {}, {})
    for body in ("one", "two"):
        await service.send(key("q"), MessageDraft(body))
    [one] = await service.receive(key("q"), attempt_id="a")
    [two] = await service.receive(key("q"), attempt_id="a")
    assert {one.message.body, two.message.body} == {"one", "two"}
    # Not checked either: AWS documents the parameter for FIFO queues only.
    assert await service.receive(key("q"), attempt_id="") == []


@pytest.mark.parametrize("attempt", ["", "x" * 129, "with space", "é"])
async def test_a_malformed_attempt_id_is_refused(service: QueueService, attempt: str) -> None:
    await fifo_queue(service, "g")
    with pytest.raises(InvalidParameter) as caught:
        await receive(service, attempt=attempt)
    assert caught.value.parameter == "ReceiveRequestAttemptId"


async def test_the_longest_attempt_id_and_punctuation_are_accepted(service: QueueService) -> None:
    await fifo_queue(service, "g")
    longest = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~" + "a" * 96
    assert len(longest) == 128
    [first] = await receive(service, attempt=longest)
    assert [d.token for d in await receive(service, attempt=longest)] == [first.token]
