"""FIFO queue types over every store: what makes a queue FIFO, what cannot change, the
FIFO-only attributes, and AWS's rule joining DeduplicationScope and FifoThroughputLimit."""

from __future__ import annotations

from typing import Any

import pytest

from hopper.core.errors import (
    InvalidAttributeName,
    InvalidAttributeValue,
    InvalidParameterRule,
)
from hopper.core.model import DeadLetterRule
from hopper.core.queues import FIFO_NAME_RULE, STANDARD_NAME_RULE
from hopper.core.service import QueueService

from .factories import key

HIGH_THROUGHPUT = {"DeduplicationScope": "messageGroup", "FifoThroughputLimit": "perMessageGroupId"}


async def test_a_fifo_queue_needs_both_the_suffix_and_the_flag(service: QueueService) -> None:
    with pytest.raises(InvalidParameterRule) as no_flag:
        await service.create_queue(key("jobs.fifo"), {}, {})
    assert no_flag.value.reason == STANDARD_NAME_RULE
    with pytest.raises(InvalidParameterRule) as no_suffix:
        await service.create_queue(key("jobs"), {"fifo": True}, {})
    assert no_suffix.value.reason == FIFO_NAME_RULE
    with pytest.raises(InvalidParameterRule):
        await service.create_queue(key("jobs.fifo"), {"fifo": False}, {})
    record = await service.create_queue(key("jobs.fifo"), {"fifo": True}, {})
    assert record.config.fifo


async def test_the_queue_type_cannot_be_changed_later(service: QueueService) -> None:
    await service.create_queue(key("q"), {}, {})
    await service.create_queue(key("q.fifo"), {"fifo": True}, {})
    with pytest.raises(InvalidAttributeName):
        await service.set_queue_attributes(key("q"), {"fifo": True})
    with pytest.raises(InvalidAttributeValue) as caught:
        await service.set_queue_attributes(key("q.fifo"), {"fifo": False})
    assert caught.value.reason == "Modifying queue type is not supported."
    # Saying what it already is changes nothing and is accepted, as on AWS.
    await service.set_queue_attributes(key("q.fifo"), {"fifo": True})
    assert (await service.get_queue(key("q.fifo"))).config.fifo


@pytest.mark.parametrize(
    "settings",
    [
        {"content_based_deduplication": True},
        {"extra": {"DeduplicationScope": "queue"}},
        {"extra": {"FifoThroughputLimit": "perQueue"}},
    ],
    ids=["ContentBasedDeduplication", "DeduplicationScope", "FifoThroughputLimit"],
)
async def test_fifo_attributes_are_unknown_on_a_standard_queue(
    service: QueueService, settings: dict[str, Any]
) -> None:
    with pytest.raises(InvalidAttributeName):
        await service.create_queue(key("q"), settings, {})
    await service.create_queue(key("q"), {}, {})
    with pytest.raises(InvalidAttributeName):
        await service.set_queue_attributes(key("q"), settings)


async def test_per_group_throughput_needs_group_deduplication(service: QueueService) -> None:
    with pytest.raises(InvalidAttributeValue) as caught:
        await service.create_queue(
            key("q.fifo"), {"fifo": True, "extra": {"FifoThroughputLimit": "perMessageGroupId"}}, {}
        )
    assert caught.value.attribute == "FifoThroughputLimit"
    with pytest.raises(InvalidAttributeValue):
        await service.create_queue(
            key("q.fifo"),
            {"fifo": True, "extra": {**HIGH_THROUGHPUT, "DeduplicationScope": "queue"}},
            {},
        )
    record = await service.create_queue(key("q.fifo"), {"fifo": True, "extra": HIGH_THROUGHPUT}, {})
    assert record.config.group_deduplication


async def test_the_combination_rule_holds_for_the_queue_after_a_change(
    service: QueueService,
) -> None:
    await service.create_queue(key("q.fifo"), {"fifo": True}, {})
    with pytest.raises(InvalidAttributeValue):
        await service.set_queue_attributes(
            key("q.fifo"), {"extra": {"FifoThroughputLimit": "perMessageGroupId"}}
        )
    await service.set_queue_attributes(key("q.fifo"), {"extra": HIGH_THROUGHPUT})
    with pytest.raises(InvalidAttributeValue):
        await service.set_queue_attributes(
            key("q.fifo"), {"extra": {"DeduplicationScope": "queue"}}
        )
    # perQueue goes with either scope.
    await service.set_queue_attributes(
        key("q.fifo"), {"extra": {"FifoThroughputLimit": "perQueue", "DeduplicationScope": "queue"}}
    )


async def test_deduplication_scope_is_kept_as_created(service: QueueService) -> None:
    """AWS (recorded by LocalStack, SQS-NOTES): switching a FIFO queue to high-throughput
    attributes later shows the new attributes but keeps how sends are deduplicated."""
    await service.create_queue(key("plain.fifo"), {"fifo": True}, {})
    await service.set_queue_attributes(key("plain.fifo"), {"extra": HIGH_THROUGHPUT})
    plain = await service.get_queue(key("plain.fifo"))
    assert plain.config.extra["DeduplicationScope"] == "messageGroup"
    assert not plain.config.group_deduplication
    await service.create_queue(key("fast.fifo"), {"fifo": True, "extra": HIGH_THROUGHPUT}, {})
    await service.set_queue_attributes(
        key("fast.fifo"),
        {"extra": {"DeduplicationScope": "queue", "FifoThroughputLimit": "perQueue"}},
    )
    assert (await service.get_queue(key("fast.fifo"))).config.group_deduplication


async def test_a_fifo_queue_dead_letters_only_to_a_fifo_queue(service: QueueService) -> None:
    await service.create_queue(key("dlq"), {}, {})
    await service.create_queue(key("dlq.fifo"), {"fifo": True}, {})
    with pytest.raises(InvalidAttributeValue) as caught:
        await service.create_queue(
            key("q.fifo"), {"fifo": True, "dead_letter": DeadLetterRule(key("dlq"), 3)}, {}
        )
    assert caught.value.reason == "Dead-letter queue must be same type of queue as the source."
    with pytest.raises(InvalidAttributeValue):
        await service.create_queue(
            key("q"), {"dead_letter": DeadLetterRule(key("dlq.fifo"), 3)}, {}
        )
    await service.create_queue(
        key("q.fifo"), {"fifo": True, "dead_letter": DeadLetterRule(key("dlq.fifo"), 3)}, {}
    )
    with pytest.raises(InvalidAttributeValue):
        await service.set_queue_attributes(
            key("q.fifo"), {"dead_letter": DeadLetterRule(key("dlq"), 3)}
        )
