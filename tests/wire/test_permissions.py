"""Permissions and the attributes around them, as the wire answers: the Policy document
AddPermission/RemovePermission maintain, RedriveAllowPolicy's validation at its edges,
KMS and SQS-managed encryption, and hopper's `Hopper.*` operator attributes."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from hopper.core.errors import QueueError
from hopper.core.service import QueueService
from hopper.store.memory import MemoryQueueStore
from hopper.wire import redrive_policies
from hopper.wire.actions import ACTIONS
from hopper.wire.context import RequestContext
from hopper.wire.errors import SqsError, from_core

ACCOUNT = "000000000000"
BASE = "http://localhost:9324"
CTX = RequestContext("json", ACCOUNT, "us-east-1", BASE, None, None, "request-1")
URL = f"{BASE}/{ACCOUNT}/jobs"
ARN = f"arn:aws:sqs:us-east-1:{ACCOUNT}:jobs"


def arn(name: str) -> str:
    return f"arn:aws:sqs:us-east-1:{ACCOUNT}:{name}"


@pytest.fixture
async def service() -> AsyncIterator[QueueService]:
    queue_service = QueueService(MemoryQueueStore(), enforce_timing_rules=False)
    await queue_service.start()
    yield queue_service
    await queue_service.close()


async def call(service: QueueService, action: str, params: dict[str, Any]) -> dict[str, Any]:
    return await ACTIONS[action](service, CTX, params)


async def failure(service: QueueService, action: str, params: dict[str, Any]) -> SqsError:
    try:
        await call(service, action, params)
    except SqsError as error:
        return error
    except QueueError as error:
        return from_core(error)
    pytest.fail(f"{action} succeeded")


async def new_queue(service: QueueService, name: str = "jobs", **given: str) -> str:
    params: dict[str, Any] = {"QueueName": name}
    if given:
        params["Attributes"] = given
    return (await call(service, "CreateQueue", params))["QueueUrl"]


async def get(service: QueueService, *names: str, url: str = URL) -> dict[str, str]:
    params = {"QueueUrl": url, "AttributeNames": list(names)}
    result = await call(service, "GetQueueAttributes", params)
    values: dict[str, str] = result.get("Attributes", {})
    return values


async def policy(service: QueueService) -> Any:
    return json.loads((await get(service, "Policy"))["Policy"])


def permission(label: str, accounts: list[str], actions: list[str]) -> dict[str, Any]:
    return {"QueueUrl": URL, "Label": label, "AWSAccountIds": accounts, "Actions": actions}


# --- the Policy document ----------------------------------------------------------------


async def test_add_permission_writes_the_policy_as_aws_shapes_it(service):
    await new_queue(service)
    await call(service, "AddPermission", permission("send", ["111111111111"], ["SendMessage"]))
    assert await policy(service) == {
        "Version": "2008-10-17",
        "Id": f"{ARN}/SQSDefaultPolicy",
        "Statement": [
            {
                "Sid": "send",
                "Effect": "Allow",
                "Principal": {"AWS": "arn:aws:iam::111111111111:root"},
                "Action": "SQS:SendMessage",
                "Resource": ARN,
            }
        ],
    }


async def test_several_accounts_and_actions_are_listed_in_one_statement(service):
    await new_queue(service)
    await call(
        service,
        "AddPermission",
        permission("both", ["111111111111", "222222222222"], ["SendMessage", "ReceiveMessage"]),
    )
    [statement] = (await policy(service))["Statement"]
    assert statement["Principal"] == {
        "AWS": ["arn:aws:iam::111111111111:root", "arn:aws:iam::222222222222:root"]
    }
    assert statement["Action"] == ["SQS:SendMessage", "SQS:ReceiveMessage"]


async def test_remove_permission_drops_the_statement_and_the_last_one_the_policy(service):
    await new_queue(service)
    await call(service, "AddPermission", permission("a", ["111111111111"], ["SendMessage"]))
    await call(service, "AddPermission", permission("b", ["111111111111"], ["DeleteMessage"]))
    await call(service, "RemovePermission", {"QueueUrl": URL, "Label": "a"})
    assert [s["Sid"] for s in (await policy(service))["Statement"]] == ["b"]
    await call(service, "RemovePermission", {"QueueUrl": URL, "Label": "b"})
    assert await get(service, "Policy") == {}
    assert "Policy" not in await get(service, "All")


async def test_a_label_already_used_is_an_invalid_parameter_value(service):
    await new_queue(service)
    await call(service, "AddPermission", permission("send", ["111111111111"], ["SendMessage"]))
    error = await failure(
        service, "AddPermission", permission("send", ["111111111111"], ["SendMessage"])
    )
    assert (error.name, error.message) == (
        "InvalidParameterValue",
        "Value send for parameter Label is invalid. Reason: Already exists.",
    )


async def test_removing_an_unknown_label_is_an_invalid_parameter_value(service):
    await new_queue(service)
    error = await failure(service, "RemovePermission", {"QueueUrl": URL, "Label": "nope"})
    assert (error.name, error.message) == (
        "InvalidParameterValue",
        "Value nope for parameter Label is invalid. Reason: can't find label.",
    )


@pytest.mark.parametrize("label", ["has space", "x" * 81, "dot.ted", ""])
async def test_a_label_of_other_characters_or_lengths_is_invalid(service, label):
    await new_queue(service)
    error = await failure(
        service, "AddPermission", permission(label, ["111111111111"], ["SendMessage"])
    )
    assert error.name in ("InvalidParameterValue", "MissingParameter")


@pytest.mark.parametrize("action", ["CreateQueue", "DeleteQueue", "SetQueueAttributes", "Bogus"])
async def test_an_owner_only_or_unknown_action_cannot_be_granted(service, action):
    await new_queue(service)
    error = await failure(service, "AddPermission", permission("l", ["111111111111"], [action]))
    assert error.name == "InvalidParameterValue"
    assert f"SQS:{action}" in error.message
    assert await get(service, "Policy") == {}


async def test_more_than_seven_actions_are_over_the_limit(service):
    await new_queue(service)
    actions = ["SendMessage", "ReceiveMessage", "DeleteMessage", "ChangeMessageVisibility",
               "GetQueueAttributes", "GetQueueUrl", "PurgeQueue", "ListQueueTags"]
    error = await failure(service, "AddPermission", permission("l", ["111111111111"], actions))
    assert error.name == "OverLimit"
    await call(service, "AddPermission", permission("l", ["111111111111"], actions[:7]))


async def test_an_empty_action_list_is_missing_the_parameter(service):
    await new_queue(service)
    params = permission("l", ["111111111111"], ["SendMessage"])
    params["Actions"] = []
    assert (await failure(service, "AddPermission", params)).name == "MissingParameter"


@pytest.mark.parametrize("accounts", [[], None])
async def test_no_account_is_an_invalid_principal(service, accounts):
    await new_queue(service)
    params = permission("l", ["111111111111"], ["SendMessage"])
    if accounts is None:
        del params["AWSAccountIds"]
    else:
        params["AWSAccountIds"] = accounts
    error = await failure(service, "AddPermission", params)
    assert (error.name, error.message) == (
        "InvalidParameterValue",
        "Value [] for parameter PrincipalId is invalid. Reason: Unable to verify.",
    )


async def test_actions_are_checked_before_accounts(service):
    await new_queue(service)
    params = permission("l", [], [])
    assert (await failure(service, "AddPermission", params)).name == "MissingParameter"


# --- RedriveAllowPolicy --------------------------------------------------------------------


def by_queue(count: int) -> str:
    arns = [arn(f"source-{n}") for n in range(count)]
    return json.dumps({"redrivePermission": "byQueue", "sourceQueueArns": arns})


@pytest.mark.parametrize(
    "text",
    [
        by_queue(1),
        by_queue(10),
        '{"redrivePermission":"allowAll"}',
        '{"redrivePermission":"denyAll"}',
        "",
    ],
    ids=["byQueue 1", "byQueue 10", "allowAll", "denyAll", "empty"],
)
def test_a_redrive_allow_policy_in_shape_is_stored_as_sent(text):
    assert redrive_policies.check_redrive_allow_policy(text) == text


def test_more_than_10_source_queues_are_refused():
    with pytest.raises(SqsError) as caught:
        redrive_policies.check_redrive_allow_policy(by_queue(11))
    assert caught.value.name == "InvalidParameterValue"
    assert caught.value.message.endswith(
        "Reason: The maximum number of source queue ARNs you can specify is 10."
    )


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        "[]",
        '{"redrivePermission":"sometimes"}',
        "{}",
        '{"redrivePermission":"byQueue"}',
        '{"redrivePermission":"byQueue","sourceQueueArns":[]}',
        '{"redrivePermission":"byQueue","sourceQueueArns":["not-an-arn"]}',
        '{"redrivePermission":"byQueue","sourceQueueArns":"' + arn("a") + '"}',
        '{"redrivePermission":"allowAll","sourceQueueArns":["' + arn("a") + '"]}',
        '{"redrivePermission":"denyAll","sourceQueueArns":["' + arn("a") + '"]}',
    ],
)
def test_a_redrive_allow_policy_out_of_shape_is_an_invalid_parameter_value(text):
    with pytest.raises(SqsError) as caught:
        redrive_policies.check_redrive_allow_policy(text)
    assert caught.value.name == "InvalidParameterValue"
    assert caught.value.message.startswith(f"Value {text} for parameter RedriveAllowPolicy")


async def test_a_dead_letter_queue_denying_a_source_refuses_its_redrive_policy(service):
    await new_queue(service, "dlq", RedriveAllowPolicy=by_queue(2))
    policy_text = json.dumps({"deadLetterTargetArn": arn("dlq"), "maxReceiveCount": 3})
    # source-0 is listed: allowed.
    await new_queue(service, "source-0", RedrivePolicy=policy_text)
    error = await failure(
        service,
        "CreateQueue",
        {"QueueName": "stranger", "Attributes": {"RedrivePolicy": policy_text}},
    )
    assert error.name == "InvalidParameterValue"
    assert (await get(service, "RedriveAllowPolicy", url=f"{BASE}/{ACCOUNT}/dlq")) == {
        "RedriveAllowPolicy": by_queue(2)
    }


# --- encryption attributes ---------------------------------------------------------------


async def test_a_kms_key_is_echoed_with_the_default_reuse_period(service):
    await new_queue(service, KmsMasterKeyId="alias/aws/sqs")
    assert await get(
        service, "KmsMasterKeyId", "KmsDataKeyReusePeriodSeconds", "SqsManagedSseEnabled"
    ) == {
        "KmsMasterKeyId": "alias/aws/sqs",
        "KmsDataKeyReusePeriodSeconds": "300",
        "SqsManagedSseEnabled": "false",
    }


async def test_a_reuse_period_is_echoed_as_set(service):
    await new_queue(service, KmsMasterKeyId="alias/k", KmsDataKeyReusePeriodSeconds="86400")
    assert (await get(service, "KmsDataKeyReusePeriodSeconds")) == {
        "KmsDataKeyReusePeriodSeconds": "86400"
    }


async def test_kms_and_sqs_managed_encryption_together_are_an_invalid_attribute_name(service):
    error = await failure(
        service,
        "CreateQueue",
        {"QueueName": "jobs",
         "Attributes": {"KmsMasterKeyId": "alias/k", "SqsManagedSseEnabled": "true"}},
    )
    assert error.name == "InvalidAttributeName"
    await new_queue(service)
    error = await failure(
        service,
        "SetQueueAttributes",
        {"QueueUrl": URL,
         "Attributes": {"KmsMasterKeyId": "alias/k", "SqsManagedSseEnabled": "true"}},
    )
    assert error.name == "InvalidAttributeName"


async def test_a_kms_key_set_later_turns_sqs_managed_encryption_off_and_removing_it_too(service):
    await new_queue(service, SqsManagedSseEnabled="true")
    await call(
        service, "SetQueueAttributes", {"QueueUrl": URL, "Attributes": {"KmsMasterKeyId": "k"}}
    )
    assert await get(service, "KmsMasterKeyId", "SqsManagedSseEnabled") == {
        "KmsMasterKeyId": "k",
        "SqsManagedSseEnabled": "false",
    }
    await call(
        service, "SetQueueAttributes", {"QueueUrl": URL, "Attributes": {"KmsMasterKeyId": ""}}
    )
    # Recorded on AWS (issue 17): removing the key does not turn SSE-SQS back on.
    assert await get(service, "KmsMasterKeyId", "SqsManagedSseEnabled") == {
        "SqsManagedSseEnabled": "false"
    }


async def test_a_new_queue_reports_sqs_managed_encryption(service):
    await new_queue(service)
    assert await get(service, "SqsManagedSseEnabled") == {"SqsManagedSseEnabled": "true"}


# --- Hopper.* operator attributes ---------------------------------------------------------


async def test_all_never_includes_the_hopper_attributes(service):
    await new_queue(service)
    assert not [name for name in await get(service, "All") if name.startswith("Hopper.")]


async def test_hopper_all_returns_every_operator_attribute_of_a_queue_with_a_dead_letter_queue(
    service,
):
    await new_queue(service, "dlq")
    policy_text = json.dumps({"deadLetterTargetArn": arn("dlq"), "maxReceiveCount": 3})
    await new_queue(service, RedrivePolicy=policy_text)
    values = await get(service, "Hopper.All")
    assert values == {
        "Hopper.ApproximateAgeOfOldestMessage": "0",
        "Hopper.ApproximateAgeOfOldestVisibleMessage": "0",
        "Hopper.ApproximateNumberOfRedeliveredMessages": "0",
        "Hopper.ApproximateNumberOfRedeliveries": "0",
        "Hopper.DeadLetterQueueDepth": "0",
    }
    both = await get(service, "All", "Hopper.All")
    assert set(values) <= set(both) and "QueueArn" in both


async def test_an_operator_attribute_asked_by_name_comes_alone(service):
    await new_queue(service)
    await call(service, "SendMessage", {"QueueUrl": URL, "MessageBody": "x"})
    await call(service, "ReceiveMessage", {"QueueUrl": URL, "VisibilityTimeout": 0})
    await call(service, "ReceiveMessage", {"QueueUrl": URL, "VisibilityTimeout": 0})
    assert await get(service, "Hopper.ApproximateNumberOfRedeliveries") == {
        "Hopper.ApproximateNumberOfRedeliveries": "1"
    }
    # A queue without a dead-letter rule has no dead-letter depth.
    assert await get(service, "Hopper.DeadLetterQueueDepth") == {}


async def test_the_dead_letter_depth_counts_the_targets_messages(service):
    dlq = await new_queue(service, "dlq")
    policy_text = json.dumps({"deadLetterTargetArn": arn("dlq"), "maxReceiveCount": 3})
    await new_queue(service, RedrivePolicy=policy_text)
    for _ in range(2):
        await call(service, "SendMessage", {"QueueUrl": dlq, "MessageBody": "x"})
    assert await get(service, "Hopper.DeadLetterQueueDepth") == {
        "Hopper.DeadLetterQueueDepth": "2"
    }


async def test_an_unknown_hopper_attribute_is_an_invalid_attribute_name(service):
    await new_queue(service)
    error = await failure(
        service, "GetQueueAttributes", {"QueueUrl": URL, "AttributeNames": ["Hopper.Bogus"]}
    )
    assert error.name == "InvalidAttributeName"


@pytest.mark.parametrize("name", ["Hopper.All", "Hopper.DeadLetterQueueDepth"])
async def test_operator_attributes_cannot_be_set(service, name):
    await new_queue(service)
    error = await failure(
        service, "SetQueueAttributes", {"QueueUrl": URL, "Attributes": {name: "1"}}
    )
    assert error.name == "InvalidAttributeName"
