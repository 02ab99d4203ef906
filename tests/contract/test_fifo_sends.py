"""FIFO sends over every store: the ids a send needs, content-based deduplication,
deduplication per group, per-message delays, and sequence numbers."""

from __future__ import annotations

import hashlib

import pytest

from hopper.core.clock import FakeClock
from hopper.core.errors import InvalidParameter, InvalidParameterRule, MissingParameter
from hopper.core.model import MessageDraft
from hopper.core.service import QueueService

from .factories import attributes, key

QUEUE = key("q.fifo")
HIGH_THROUGHPUT = {"DeduplicationScope": "messageGroup", "FifoThroughputLimit": "perMessageGroupId"}


async def fifo_queue(service: QueueService, **settings: object) -> None:
    await service.create_queue(QUEUE, {"fifo": True, **settings}, {})


async def bodies(service: QueueService) -> list[str]:
    return [d.message.body for d in await service.receive(QUEUE, max_messages=10)]


async def test_a_send_needs_a_group_id(service: QueueService) -> None:
    await fifo_queue(service)
    with pytest.raises(MissingParameter) as caught:
        await service.send(QUEUE, MessageDraft("x", deduplication_id="d"))
    assert caught.value.parameter == "MessageGroupId"


async def test_a_send_needs_a_deduplication_id_without_content_based_deduplication(
    service: QueueService,
) -> None:
    await fifo_queue(service)
    with pytest.raises(InvalidParameterRule) as caught:
        await service.send(QUEUE, MessageDraft("x", group_id="g"))
    assert caught.value.reason == (
        "The queue should either have ContentBasedDeduplication enabled or "
        "MessageDeduplicationId provided explicitly"
    )


async def test_content_based_deduplication_is_the_sha256_of_the_body(
    service: QueueService, clock: FakeClock
) -> None:
    await fifo_queue(service, content_based_deduplication=True)
    first = await service.send(QUEUE, MessageDraft("same", group_id="a"))
    # The body alone counts: another group, other attributes, still a duplicate.
    again = await service.send(QUEUE, MessageDraft("same", group_id="b", trace_header="t"))
    other = await service.send(QUEUE, MessageDraft("other", group_id="a"))
    assert again.duplicate and again.message_id == first.message_id
    assert not other.duplicate
    [delivery, _] = await service.receive(QUEUE, max_messages=10)
    assert delivery.message.deduplication_id == hashlib.sha256(b"same").hexdigest()


async def test_an_explicit_id_wins_over_content_based_deduplication(
    service: QueueService,
) -> None:
    await fifo_queue(service, content_based_deduplication=True)
    await service.send(QUEUE, MessageDraft("same", group_id="g", deduplication_id="one"))
    second = await service.send(QUEUE, MessageDraft("same", group_id="g", deduplication_id="two"))
    assert not second.duplicate
    assert await bodies(service) == ["same", "same"]


async def test_group_deduplication_scopes_ids_to_their_group(service: QueueService) -> None:
    await fifo_queue(service, extra=HIGH_THROUGHPUT)
    a = await service.send(QUEUE, MessageDraft("a", group_id="a", deduplication_id="d"))
    b = await service.send(QUEUE, MessageDraft("b", group_id="b", deduplication_id="d"))
    again = await service.send(QUEUE, MessageDraft("a2", group_id="a", deduplication_id="d"))
    assert not b.duplicate and b.message_id != a.message_id
    assert again.duplicate and again.message_id == a.message_id
    assert sorted(await bodies(service)) == ["a", "b"]


async def test_group_deduplication_in_one_batch(service: QueueService) -> None:
    await fifo_queue(service, extra=HIGH_THROUGHPUT)
    drafts = [
        MessageDraft("a", group_id="a", deduplication_id="d"),
        MessageDraft("b", group_id="b", deduplication_id="d"),
        MessageDraft("a2", group_id="a", deduplication_id="d"),
    ]
    results = await service.send_batch(QUEUE, drafts)
    assert [getattr(r, "duplicate", None) for r in results] == [False, False, True]
    assert sorted(await bodies(service)) == ["a", "b"]


async def test_a_group_id_with_the_separator_does_not_collide(service: QueueService) -> None:
    """Group and id are joined into one key: "a:1" + "x" must not meet "a" + "1:x"."""
    await fifo_queue(service, extra=HIGH_THROUGHPUT)
    await service.send(QUEUE, MessageDraft("one", group_id="a:1", deduplication_id="x"))
    other = await service.send(QUEUE, MessageDraft("two", group_id="a", deduplication_id="1:x"))
    assert not other.duplicate


async def test_queue_deduplication_ignores_the_group(service: QueueService) -> None:
    await fifo_queue(service)
    a = await service.send(QUEUE, MessageDraft("a", group_id="a", deduplication_id="d"))
    b = await service.send(QUEUE, MessageDraft("b", group_id="b", deduplication_id="d"))
    assert b.duplicate and b.message_id == a.message_id


@pytest.mark.parametrize("delay", [1.0, 900.0])
async def test_a_per_message_delay_is_refused(service: QueueService, delay: float) -> None:
    await fifo_queue(service)
    draft = MessageDraft("x", group_id="g", deduplication_id="d", delay=delay)
    with pytest.raises(InvalidParameter) as caught:
        await service.send(QUEUE, draft)
    assert caught.value.parameter == "DelaySeconds"
    assert (
        caught.value.reason
        == "The request include parameter that is not valid for this queue type."
    )
    [failed] = await service.send_batch(QUEUE, [draft])
    assert isinstance(failed, InvalidParameter)


async def test_the_queue_delay_applies(service: QueueService, clock: FakeClock) -> None:
    await fifo_queue(service, delay_seconds=5.0)
    # DelaySeconds 0 asks for no timer at all, and is accepted.
    await service.send(QUEUE, MessageDraft("x", group_id="g", deduplication_id="d", delay=0.0))
    clock.advance(4.999)
    assert await bodies(service) == []
    clock.advance(0.001)
    assert await bodies(service) == ["x"]


async def test_attributes_and_trace_headers_are_kept_and_their_absence_too(
    service: QueueService,
) -> None:
    # (The PostgreSQL store's FIFO statement is sent empty ones as absent: sends.py.)
    await fifo_queue(service)
    full = MessageDraft("full", attributes(), "Root=1-abc", group_id="g", deduplication_id="1")
    bare = MessageDraft("bare", group_id="g", deduplication_id="2")
    await service.send_batch(QUEUE, [full, bare])
    [first, second] = await service.receive(QUEUE, max_messages=10)
    assert (first.message.body, first.message.attributes) == ("full", attributes())
    assert first.message.trace_header == "Root=1-abc"
    assert (second.message.body, second.message.attributes) == ("bare", {})
    assert second.message.trace_header is None


async def test_sequence_numbers_increase_per_group_and_per_queue(service: QueueService) -> None:
    await fifo_queue(service)
    groups = ["a", "b", "a", "c", "b", "a"]
    results = [
        await service.send(QUEUE, MessageDraft(f"m{n}", group_id=g, deduplication_id=f"d{n}"))
        for n, g in enumerate(groups)
    ]
    numbers = [r.sequence_number for r in results]
    assert all(isinstance(n, int) for n in numbers)
    assert numbers == sorted(set(numbers))  # type: ignore[type-var]
    received = await service.receive(QUEUE, max_messages=10)
    by_id = {r.message_id: r.sequence_number for r in results}
    assert {d.message.id: d.message.sequence_number for d in received} == {
        d.message.id: by_id[d.message.id] for d in received
    }


async def test_a_duplicate_answers_with_the_original_sequence_number(
    service: QueueService, clock: FakeClock
) -> None:
    await fifo_queue(service)
    first = await service.send(QUEUE, MessageDraft("x", group_id="g", deduplication_id="d"))
    await service.send(QUEUE, MessageDraft("y", group_id="g", deduplication_id="e"))
    clock.advance(299.999)
    again = await service.send(QUEUE, MessageDraft("x", group_id="g", deduplication_id="d"))
    assert (again.message_id, again.sequence_number) == (first.message_id, first.sequence_number)
    assert again.duplicate


async def test_a_batch_entry_without_a_group_id_fails_the_whole_batch(
    service: QueueService,
) -> None:
    """AWS fails the call, not the entry (LocalStack's AWS-recorded snapshot
    test_send_batch_missing_message_group_id_for_fifo_queue)."""
    await fifo_queue(service)
    drafts = [
        MessageDraft("ok", group_id="g", deduplication_id="d1"),
        MessageDraft("no group", deduplication_id="d2"),
    ]
    with pytest.raises(InvalidParameterRule) as caught:
        await service.send_batch(QUEUE, drafts)
    assert caught.value.reason == "The request must contain the parameter MessageGroupId."
    assert await bodies(service) == []
