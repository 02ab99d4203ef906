"""QueueService over every store: AddPermission/RemovePermission maintain the Policy
document, and a dead-letter queue's RedriveAllowPolicy decides which sources may name it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from hopper.core.errors import InvalidAttributeValue, InvalidParameter, QueueNotFound
from hopper.core.model import DeadLetterRule
from hopper.core.service import QueueService

from .factories import ACCOUNT, key

POLICY_ID = "arn:aws:sqs:us-east-1:000000000000:q/SQSDefaultPolicy"


def statement(label: str, action: str = "SQS:SendMessage") -> dict[str, Any]:
    return {
        "Sid": label,
        "Effect": "Allow",
        "Principal": {"AWS": "arn:aws:iam::111111111111:root"},
        "Action": action,
        "Resource": "arn:aws:sqs:us-east-1:000000000000:q",
    }


async def policy(service: QueueService) -> Any:
    text = (await service.get_queue(key("q"))).config.extra.get("Policy")
    return None if text is None else json.loads(text)


# --- permissions --------------------------------------------------------------------------


async def test_the_first_permission_creates_the_policy_document(service: QueueService) -> None:
    await service.create_queue(key("q"), {}, {})
    await service.add_permission(key("q"), "send", statement("send"), POLICY_ID)
    assert await policy(service) == {
        "Version": "2008-10-17",
        "Id": POLICY_ID,
        "Statement": [statement("send")],
    }


async def test_each_permission_adds_a_statement_in_order(service: QueueService) -> None:
    await service.create_queue(key("q"), {}, {})
    await service.add_permission(key("q"), "send", statement("send"), POLICY_ID)
    await service.add_permission(
        key("q"), "read", statement("read", "SQS:ReceiveMessage"), POLICY_ID
    )
    document = await policy(service)
    assert document["Statement"] == [statement("send"), statement("read", "SQS:ReceiveMessage")]


async def test_a_label_already_in_the_policy_is_refused(service: QueueService) -> None:
    await service.create_queue(key("q"), {}, {})
    await service.add_permission(key("q"), "send", statement("send"), POLICY_ID)
    with pytest.raises(InvalidParameter) as caught:
        await service.add_permission(key("q"), "send", statement("send", "SQS:*"), POLICY_ID)
    assert (caught.value.parameter, caught.value.value) == ("Label", "send")
    assert (await policy(service))["Statement"] == [statement("send")]


async def test_removing_a_permission_removes_its_statement(service: QueueService) -> None:
    await service.create_queue(key("q"), {}, {})
    await service.add_permission(key("q"), "send", statement("send"), POLICY_ID)
    await service.add_permission(key("q"), "read", statement("read"), POLICY_ID)
    await service.remove_permission(key("q"), "send")
    assert (await policy(service))["Statement"] == [statement("read")]


async def test_removing_the_last_permission_removes_the_policy(service: QueueService) -> None:
    await service.create_queue(key("q"), {}, {})
    await service.add_permission(key("q"), "send", statement("send"), POLICY_ID)
    await service.remove_permission(key("q"), "send")
    assert await policy(service) is None


async def test_removing_an_unknown_label_is_refused(service: QueueService) -> None:
    await service.create_queue(key("q"), {}, {})
    with pytest.raises(InvalidParameter) as caught:
        await service.remove_permission(key("q"), "nope")
    assert caught.value.parameter == "Label"
    await service.add_permission(key("q"), "send", statement("send"), POLICY_ID)
    with pytest.raises(InvalidParameter):
        await service.remove_permission(key("q"), "nope")


async def test_a_policy_set_as_an_attribute_gains_the_permission(service: QueueService) -> None:
    own = {"Version": "2012-10-17", "Id": "mine", "Statement": [statement("own")]}
    await service.create_queue(key("q"), {"extra": {"Policy": json.dumps(own)}}, {})
    await service.add_permission(key("q"), "send", statement("send"), POLICY_ID)
    assert await policy(service) == {
        "Version": "2012-10-17",
        "Id": "mine",
        "Statement": [statement("own"), statement("send")],
    }


async def test_permissions_keep_the_other_attributes(service: QueueService) -> None:
    settings = {"visibility_timeout": 7.0, "extra": {"KmsMasterKeyId": "alias/k"}}
    await service.create_queue(key("q"), settings, {})
    await service.add_permission(key("q"), "send", statement("send"), POLICY_ID)
    config = (await service.get_queue(key("q"))).config
    assert config.visibility_timeout == 7.0
    assert config.extra["KmsMasterKeyId"] == "alias/k"


async def test_permissions_of_an_unknown_queue_are_queue_not_found(
    service: QueueService,
) -> None:
    with pytest.raises(QueueNotFound):
        await service.add_permission(key("q"), "send", statement("send"), POLICY_ID)
    with pytest.raises(QueueNotFound):
        await service.remove_permission(key("q"), "send")


# --- RedriveAllowPolicy -------------------------------------------------------------------


def arn(name: str, account: str = ACCOUNT) -> str:
    return f"arn:aws:sqs:us-east-1:{account}:{name}"


async def dead_letter_queue(service: QueueService, allow: dict[str, Any] | None) -> None:
    extra = {} if allow is None else {"RedriveAllowPolicy": json.dumps(allow)}
    await service.create_queue(key("dlq"), {"extra": extra}, {})


def redrive(max_receive_count: int = 3) -> dict[str, Any]:
    return {"dead_letter": DeadLetterRule(key("dlq"), max_receive_count)}


@pytest.mark.parametrize(
    "allow",
    [
        None,
        {"redrivePermission": "allowAll"},
        {"redrivePermission": "byQueue", "sourceQueueArns": [arn("other"), arn("source")]},
    ],
    ids=["no policy", "allowAll", "byQueue listing it"],
)
async def test_a_source_the_policy_allows_may_name_the_dead_letter_queue(
    service: QueueService, allow: dict[str, Any] | None
) -> None:
    await dead_letter_queue(service, allow)
    record = await service.create_queue(key("source"), redrive(), {})
    assert record.config.dead_letter == DeadLetterRule(key("dlq"), 3)
    page = await service.list_dead_letter_sources(key("dlq"), max_results=None, next_token=None)
    assert page.keys == [key("source")]


@pytest.mark.parametrize(
    "allow",
    [
        {"redrivePermission": "denyAll"},
        {"redrivePermission": "byQueue", "sourceQueueArns": [arn("other")]},
        {"redrivePermission": "byQueue", "sourceQueueArns": [arn("source", "111111111111")]},
    ],
    ids=["denyAll", "byQueue without it", "byQueue naming another account's queue"],
)
async def test_a_source_the_policy_refuses_cannot_name_the_dead_letter_queue(
    service: QueueService, allow: dict[str, Any]
) -> None:
    await dead_letter_queue(service, allow)
    with pytest.raises(InvalidAttributeValue) as caught:
        await service.create_queue(key("source"), redrive(), {})
    assert caught.value.attribute == "dead_letter"
    with pytest.raises(QueueNotFound):
        await service.get_queue(key("source"))
    await service.create_queue(key("plain"), {}, {})
    with pytest.raises(InvalidAttributeValue):
        await service.set_queue_attributes(key("plain"), redrive())
    assert (await service.get_queue(key("plain"))).config.dead_letter is None


async def test_a_policy_set_later_does_not_undo_an_existing_redrive(
    service: QueueService,
) -> None:
    await dead_letter_queue(service, None)
    await service.create_queue(key("source"), redrive(), {})
    deny = json.dumps({"redrivePermission": "denyAll"})
    await service.set_queue_attributes(key("dlq"), {"extra": {"RedriveAllowPolicy": deny}})
    assert (await service.get_queue(key("source"))).config.dead_letter is not None
    # Changing anything but the redrive keeps the source as it is.
    await service.set_queue_attributes(key("source"), {"visibility_timeout": 9.0})
    with pytest.raises(InvalidAttributeValue):
        await service.set_queue_attributes(key("source"), redrive(5))
