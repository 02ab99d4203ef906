"""The action handlers, called directly on a real QueueService over the memory store,
with parameters in both shapes: JSON values, and the strings the query decoder leaves."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import Any

import pytest

from hopper.core.errors import QueueError
from hopper.core.model import MessageAttribute, QueueKey
from hopper.core.service import QueueService
from hopper.store.memory import MemoryQueueStore
from hopper.wire import digests
from hopper.wire.actions import ACTIONS
from hopper.wire.context import RequestContext
from hopper.wire.errors import SqsError, from_core

ACCOUNT = "000000000000"
BASE = "http://localhost:9324"
CTX = RequestContext("json", ACCOUNT, "us-east-1", BASE, None, None, "request-1")


@pytest.fixture
async def service() -> AsyncIterator[QueueService]:
    queue_service = QueueService(MemoryQueueStore(), enforce_timing_rules=False)
    await queue_service.start()
    yield queue_service
    await queue_service.close()


async def call(
    service: QueueService, action: str, params: dict[str, Any], ctx: RequestContext = CTX
) -> dict[str, Any]:
    return await ACTIONS[action](service, ctx, params)


async def failure(
    service: QueueService, action: str, params: dict[str, Any], ctx: RequestContext = CTX
) -> SqsError:
    """The SQS error the action answers with, as http.py would render it."""
    try:
        await call(service, action, params, ctx)
    except SqsError as error:
        return error
    except QueueError as error:
        return from_core(error)
    pytest.fail(f"{action} succeeded")


async def new_queue(service: QueueService, name: str = "jobs", **attributes: str) -> str:
    params: dict[str, Any] = {"QueueName": name}
    if attributes:
        params["Attributes"] = attributes
    return (await call(service, "CreateQueue", params))["QueueUrl"]


async def receive(service: QueueService, url: str, **params: Any) -> list[dict[str, Any]]:
    result = await call(service, "ReceiveMessage", {"QueueUrl": url, **params})
    messages: list[dict[str, Any]] = result.get("Messages", [])
    return messages


def test_every_action_of_the_api_has_a_handler():
    assert len(ACTIONS) == 23


# --- queues ---------------------------------------------------------------------------


async def test_create_queue_answers_the_queue_url_under_the_base_url(service):
    assert await new_queue(service) == f"{BASE}/{ACCOUNT}/jobs"


async def test_create_queue_reads_attributes_and_tags(service):
    url = await new_queue(service, "tagged", VisibilityTimeout="45")
    await call(service, "TagQueue", {"QueueUrl": url, "Tags": {"team": "a"}})
    attributes = await call(
        service, "GetQueueAttributes", {"QueueUrl": url, "AttributeNames": ["VisibilityTimeout"]}
    )
    assert attributes == {"Attributes": {"VisibilityTimeout": "45"}}


async def test_create_queue_with_a_different_attribute_names_it(service):
    await new_queue(service, DelaySeconds="5")
    error = await failure(
        service, "CreateQueue", {"QueueName": "jobs", "Attributes": {"DelaySeconds": "6"}}
    )
    assert (error.name, error.message) == (
        "QueueNameExists",
        "A queue already exists with the same name and a different value for attribute "
        "DelaySeconds",
    )


async def test_create_queue_with_the_same_attributes_returns_the_same_url(service):
    first = await new_queue(service, DelaySeconds="5")
    assert await new_queue(service, DelaySeconds="5") == first


async def test_create_queue_without_a_name_is_missing_a_parameter(service):
    error = await failure(service, "CreateQueue", {})
    assert (error.name, error.message) == (
        "MissingParameter",
        "The request must contain the parameter QueueName.",
    )


async def test_get_queue_url_finds_a_queue_by_name(service):
    url = await new_queue(service)
    assert await call(service, "GetQueueUrl", {"QueueName": "jobs"}) == {"QueueUrl": url}


async def test_get_queue_url_of_a_missing_queue_is_queue_does_not_exist(service):
    error = await failure(service, "GetQueueUrl", {"QueueName": "nope"})
    assert error.name == "QueueDoesNotExist"
    assert error.text_for("query") == "The specified queue does not exist for this wsdl version."


async def test_list_queues_filters_by_prefix_and_pages_in_query_shape(service):
    for name in ("a1", "a2", "b1"):
        await new_queue(service, name)
    first = await call(service, "ListQueues", {"QueueNamePrefix": "a", "MaxResults": "1"})
    assert first["QueueUrls"] == [f"{BASE}/{ACCOUNT}/a1"]
    rest = await call(
        service,
        "ListQueues",
        {"QueueNamePrefix": "a", "MaxResults": "1", "NextToken": first["NextToken"]},
    )
    assert rest["QueueUrls"] == [f"{BASE}/{ACCOUNT}/a2"]


async def test_list_queues_with_no_match_has_no_queue_urls_member(service):
    assert await call(service, "ListQueues", {"QueueNamePrefix": "zzz"}) == {}


async def test_a_queue_url_is_matched_by_account_and_name_whatever_the_host(service):
    await new_queue(service)
    url = f"https://elsewhere.example:1234/{ACCOUNT}/jobs"
    assert await call(service, "GetQueueAttributes", {"QueueUrl": url}) == {}


async def test_a_queue_url_of_another_account_does_not_exist(service):
    await new_queue(service)
    error = await failure(service, "PurgeQueue", {"QueueUrl": f"{BASE}/111111111111/jobs"})
    assert error.name == "QueueDoesNotExist"


async def test_a_request_sent_to_the_queue_url_needs_no_queue_url_parameter(service):
    await new_queue(service)
    ctx = RequestContext("query", ACCOUNT, "us-east-1", BASE, QueueKey(ACCOUNT, "jobs"), None, "r")
    await call(service, "SendMessage", {"MessageBody": "via path"}, ctx)
    assert [m["Body"] for m in await receive(service, f"{BASE}/{ACCOUNT}/jobs")] == ["via path"]


async def test_a_request_without_any_queue_url_is_missing_the_parameter(service):
    error = await failure(service, "PurgeQueue", {})
    assert error.message == "The request must contain the parameter QueueUrl."


async def test_get_queue_attributes_counts_messages(service):
    url = await new_queue(service)
    for body in ("a", "b", "c"):
        await call(service, "SendMessage", {"QueueUrl": url, "MessageBody": body})
    await call(service, "SendMessage", {"QueueUrl": url, "MessageBody": "d", "DelaySeconds": "60"})
    await receive(service, url)
    result = await call(service, "GetQueueAttributes", {"QueueUrl": url, "AttributeNames": ["All"]})
    counts = {k: v for k, v in result["Attributes"].items() if k.startswith("Approximate")}
    assert counts == {
        "ApproximateNumberOfMessages": "2",
        "ApproximateNumberOfMessagesNotVisible": "1",
        "ApproximateNumberOfMessagesDelayed": "1",
    }
    assert result["Attributes"]["QueueArn"] == f"arn:aws:sqs:us-east-1:{ACCOUNT}:jobs"


async def test_set_queue_attributes_changes_what_get_returns(service):
    url = await new_queue(service)
    await call(
        service,
        "SetQueueAttributes",
        {"QueueUrl": url, "Attributes": {"DelaySeconds": "7", "Policy": '{"Version":"1"}'}},
    )
    result = await call(
        service,
        "GetQueueAttributes",
        {"QueueUrl": url, "AttributeNames": ["DelaySeconds", "Policy"]},
    )
    assert result == {"Attributes": {"DelaySeconds": "7", "Policy": '{"Version":"1"}'}}


async def test_set_queue_attributes_refuses_fifo_queue_on_a_standard_queue(service):
    url = await new_queue(service)
    error = await failure(
        service, "SetQueueAttributes", {"QueueUrl": url, "Attributes": {"FifoQueue": "true"}}
    )
    assert (error.name, error.message) == ("InvalidAttributeName", "Unknown Attribute FifoQueue.")


async def test_set_queue_attributes_refuses_a_value_out_of_range(service):
    url = await new_queue(service)
    error = await failure(
        service,
        "SetQueueAttributes",
        {"QueueUrl": url, "Attributes": {"VisibilityTimeout": "43201"}},
    )
    assert error.message == "Invalid value for the parameter VisibilityTimeout."


async def test_a_redrive_policy_round_trips_and_lists_its_source(service):
    await new_queue(service, "dlq")
    arn = f"arn:aws:sqs:us-east-1:{ACCOUNT}:dlq"
    policy = f'{{"deadLetterTargetArn":"{arn}","maxReceiveCount":3}}'
    url = await new_queue(service, "src", RedrivePolicy=policy)
    result = await call(
        service, "GetQueueAttributes", {"QueueUrl": url, "AttributeNames": ["RedrivePolicy"]}
    )
    assert result == {"Attributes": {"RedrivePolicy": policy}}
    sources = await call(
        service, "ListDeadLetterSourceQueues", {"QueueUrl": f"{BASE}/{ACCOUNT}/dlq"}
    )
    assert sources == {"queueUrls": [url]}


async def test_a_redrive_policy_the_core_refuses_is_an_invalid_value_of_the_policy(service):
    # AWS words every RedrivePolicy refusal as an invalid value of it, quoting it.
    policy = (
        f'{{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:{ACCOUNT}:nowhere","maxReceiveCount":3}}'
    )
    other = await new_queue(service, "other")
    for action, params in (
        ("CreateQueue", {"QueueName": "src", "Attributes": {"RedrivePolicy": policy}}),
        ("SetQueueAttributes", {"QueueUrl": other, "Attributes": {"RedrivePolicy": policy}}),
    ):
        error = await failure(service, action, params)
        assert (error.name, error.message) == (
            "InvalidParameterValue",
            f"Value {policy} for parameter RedrivePolicy is invalid. "
            "Reason: Dead letter target does not exist.",
        )


async def test_purge_queue_removes_every_message(service):
    url = await new_queue(service)
    await call(service, "SendMessage", {"QueueUrl": url, "MessageBody": "x"})
    assert await call(service, "PurgeQueue", {"QueueUrl": url}) == {}
    assert await receive(service, url) == []


async def test_a_deleted_queue_no_longer_exists(service):
    url = await new_queue(service)
    assert await call(service, "DeleteQueue", {"QueueUrl": url}) == {}
    error = await failure(service, "GetQueueUrl", {"QueueName": "jobs"})
    assert error.name == "QueueDoesNotExist"


# --- tags -----------------------------------------------------------------------------


async def test_tags_are_added_listed_and_removed(service):
    url = await new_queue(service)
    await call(service, "TagQueue", {"QueueUrl": url, "Tags": {"a": "1", "b": "2"}})
    await call(service, "UntagQueue", {"QueueUrl": url, "TagKeys": ["a"]})
    assert await call(service, "ListQueueTags", {"QueueUrl": url}) == {"Tags": {"b": "2"}}


async def test_a_queue_without_tags_lists_no_tags_member(service):
    url = await new_queue(service)
    assert await call(service, "ListQueueTags", {"QueueUrl": url}) == {}


async def test_create_queue_tags_are_listed(service):
    result = await call(service, "CreateQueue", {"QueueName": "t", "tags": {"k": "v"}})
    assert await call(service, "ListQueueTags", {"QueueUrl": result["QueueUrl"]}) == {
        "Tags": {"k": "v"}
    }


# --- messages -------------------------------------------------------------------------


async def test_send_message_answers_the_id_and_the_body_digest(service):
    url = await new_queue(service)
    sent = await call(service, "SendMessage", {"QueueUrl": url, "MessageBody": "hello"})
    assert sent == {
        "MessageId": sent["MessageId"],
        "MD5OfMessageBody": digests.md5_of_body("hello"),
    }


async def test_send_message_digests_its_user_and_system_attributes(service):
    url = await new_queue(service)
    user = {"n": {"DataType": "Number", "StringValue": "3"}}
    system = {"AWSTraceHeader": {"DataType": "String", "StringValue": "Root=1-a"}}
    sent = await call(
        service,
        "SendMessage",
        {
            "QueueUrl": url,
            "MessageBody": "x",
            "MessageAttributes": user,
            "MessageSystemAttributes": system,
        },
    )
    assert sent["MD5OfMessageAttributes"] == digests.md5_of_attributes(
        {"n": MessageAttribute("Number", string_value="3")}
    )
    assert sent["MD5OfMessageSystemAttributes"] == digests.md5_of_system_attributes("Root=1-a")


async def test_send_message_with_an_empty_body_is_missing_the_body(service):
    url = await new_queue(service)
    error = await failure(service, "SendMessage", {"QueueUrl": url, "MessageBody": ""})
    assert error.message == "The request must contain the parameter MessageBody."


async def test_send_message_with_a_non_integer_delay_is_an_invalid_value(service):
    url = await new_queue(service)
    error = await failure(
        service, "SendMessage", {"QueueUrl": url, "MessageBody": "x", "DelaySeconds": "soon"}
    )
    assert error.name == "InvalidParameterValue"


@pytest.mark.parametrize("delay", ["901", "-1"])
async def test_send_message_with_a_delay_out_of_range_says_aws_text(service, delay):
    url = await new_queue(service)
    error = await failure(
        service, "SendMessage", {"QueueUrl": url, "MessageBody": "x", "DelaySeconds": delay}
    )
    assert (error.name, error.message) == (
        "InvalidParameterValue",
        f"Value {delay} for parameter DelaySeconds is invalid. "
        "Reason: DelaySeconds must be >= 0 and <= 900.",
    )


async def test_receive_message_on_an_empty_queue_has_no_messages_member(service):
    url = await new_queue(service)
    assert await call(service, "ReceiveMessage", {"QueueUrl": url}) == {}


async def test_receive_message_reads_query_strings_and_returns_the_message(service):
    url = await new_queue(service)
    for body in ("a", "b", "c"):
        await call(service, "SendMessage", {"QueueUrl": url, "MessageBody": body})
    received = await receive(service, url, MaxNumberOfMessages="2", VisibilityTimeout="60")
    assert len(received) == 2
    assert received[0]["MD5OfBody"] == digests.md5_of_body(received[0]["Body"])
    assert "Attributes" not in received[0]
    assert "MessageAttributes" not in received[0]


async def test_receive_message_returns_the_system_attributes_asked_for(service):
    url = await new_queue(service)
    await call(service, "SendMessage", {"QueueUrl": url, "MessageBody": "x"})
    [message] = await receive(
        service, url, MessageSystemAttributeNames=["ApproximateReceiveCount", "FencingToken"]
    )
    assert message["Attributes"]["ApproximateReceiveCount"] == "1"
    assert message["Attributes"]["FencingToken"].isdigit()


async def test_receive_message_returns_user_attributes_with_their_digest(service):
    url = await new_queue(service)
    binary = base64.b64encode(b"\x00\x01").decode()
    await call(
        service,
        "SendMessage",
        {
            "QueueUrl": url,
            "MessageBody": "x",
            "MessageAttributes": {
                "s": {"DataType": "String", "StringValue": "v"},
                "b": {"DataType": "Binary", "BinaryValue": binary},
            },
        },
    )
    [message] = await receive(service, url, MessageAttributeNames=["b"])
    assert message["MessageAttributes"] == {"b": {"DataType": "Binary", "BinaryValue": b"\x00\x01"}}
    assert message["MD5OfMessageAttributes"] == digests.md5_of_attributes(
        {"b": MessageAttribute("Binary", binary_value=b"\x00\x01")}
    )


async def test_receive_message_with_too_many_messages_asked_is_an_invalid_value(service):
    url = await new_queue(service)
    error = await failure(service, "ReceiveMessage", {"QueueUrl": url, "MaxNumberOfMessages": 0})
    assert error.name == "InvalidParameterValue"


async def test_send_message_batch_fails_only_the_entry_that_is_too_long(service):
    url = await new_queue(service, MaximumMessageSize="1024")
    result = await call(
        service,
        "SendMessageBatch",
        {
            "QueueUrl": url,
            "Entries": [
                {"Id": "ok", "MessageBody": "small"},
                {"Id": "big", "MessageBody": "x" * 1025},
                {"Id": "empty", "MessageBody": ""},
            ],
        },
    )
    assert [entry["Id"] for entry in result["Successful"]] == ["ok"]
    assert result["Successful"][0]["MD5OfMessageBody"] == digests.md5_of_body("small")
    assert result["Failed"] == [
        {
            "Id": "big",
            "SenderFault": True,
            "Code": "InvalidParameterValue",
            "Message": "One or more parameters cannot be validated. Reason: Message must be "
            "shorter than 1024 bytes.",
        },
        {
            "Id": "empty",
            "SenderFault": True,
            "Code": "MissingParameter",
            "Message": "The request must contain the parameter MessageBody.",
        },
    ]


async def test_send_message_batch_without_entries_is_an_empty_batch(service):
    url = await new_queue(service)
    error = await failure(service, "SendMessageBatch", {"QueueUrl": url})
    assert error.message == (
        "There should be at least one SendMessageBatchRequestEntry in the request."
    )


async def test_send_message_batch_with_eleven_entries_sends_nothing(service):
    url = await new_queue(service)
    entries = [{"Id": str(i), "MessageBody": "x"} for i in range(11)]
    error = await failure(service, "SendMessageBatch", {"QueueUrl": url, "Entries": entries})
    assert error.name == "TooManyEntriesInBatchRequest"
    assert await receive(service, url) == []


# --- receipts -------------------------------------------------------------------------


async def test_a_received_message_is_deleted_with_its_receipt(service):
    url = await new_queue(service)
    await call(service, "SendMessage", {"QueueUrl": url, "MessageBody": "x"})
    [message] = await receive(service, url, VisibilityTimeout=0)
    handle = message["ReceiptHandle"]
    assert await call(service, "DeleteMessage", {"QueueUrl": url, "ReceiptHandle": handle}) == {}
    assert await receive(service, url) == []


async def test_a_garbage_receipt_handle_is_invalid(service):
    url = await new_queue(service)
    error = await failure(service, "DeleteMessage", {"QueueUrl": url, "ReceiptHandle": "garbage"})
    assert (error.name, error.message) == (
        "ReceiptHandleIsInvalid",
        'The input receipt handle "garbage" is not a valid receipt handle.',
    )


async def test_a_receipt_of_another_queue_is_invalid(service):
    one, other = await new_queue(service, "one"), await new_queue(service, "other")
    await call(service, "SendMessage", {"QueueUrl": one, "MessageBody": "x"})
    [message] = await receive(service, one)
    error = await failure(
        service, "DeleteMessage", {"QueueUrl": other, "ReceiptHandle": message["ReceiptHandle"]}
    )
    assert error.name == "ReceiptHandleIsInvalid"


@pytest.mark.parametrize("action", ["DeleteMessage", "ChangeMessageVisibility"])
async def test_a_bad_receipt_sent_to_a_missing_queue_is_non_existent_queue(service, action):
    # AWS resolves the queue before the handle.
    one = await new_queue(service, "one")
    await call(service, "SendMessage", {"QueueUrl": one, "MessageBody": "x"})
    [message] = await receive(service, one)
    missing = one.replace("/one", "/missing")
    for handle in (message["ReceiptHandle"], "garbage"):
        params = {"QueueUrl": missing, "ReceiptHandle": handle, "VisibilityTimeout": "5"}
        if action == "DeleteMessage":
            del params["VisibilityTimeout"]
        assert (await failure(service, action, params)).name == "QueueDoesNotExist"


async def test_a_superseded_receipt_cannot_delete(service):
    url = await new_queue(service)
    await call(service, "SendMessage", {"QueueUrl": url, "MessageBody": "x"})
    [first] = await receive(service, url, VisibilityTimeout="0")
    await receive(service, url)
    error = await failure(
        service, "DeleteMessage", {"QueueUrl": url, "ReceiptHandle": first["ReceiptHandle"]}
    )
    assert error.name == "ReceiptHandleIsInvalid"
    assert "superseded" in error.message


async def test_delete_message_without_a_receipt_is_missing_it(service):
    url = await new_queue(service)
    error = await failure(service, "DeleteMessage", {"QueueUrl": url})
    assert error.message == "The request must contain the parameter ReceiptHandle."


async def test_delete_message_batch_fails_only_the_garbage_entry(service):
    url = await new_queue(service)
    await call(service, "SendMessage", {"QueueUrl": url, "MessageBody": "x"})
    [message] = await receive(service, url)
    result = await call(
        service,
        "DeleteMessageBatch",
        {
            "QueueUrl": url,
            "Entries": [
                {"Id": "good", "ReceiptHandle": message["ReceiptHandle"]},
                {"Id": "bad", "ReceiptHandle": "garbage"},
            ],
        },
    )
    assert result["Successful"] == [{"Id": "good"}]
    assert [(f["Id"], f["Code"], f["SenderFault"]) for f in result["Failed"]] == [
        ("bad", "ReceiptHandleIsInvalid", True)
    ]


async def test_change_message_visibility_makes_a_message_visible_again(service):
    url = await new_queue(service)
    await call(service, "SendMessage", {"QueueUrl": url, "MessageBody": "x"})
    [message] = await receive(service, url, VisibilityTimeout=600)
    await call(
        service,
        "ChangeMessageVisibility",
        {"QueueUrl": url, "ReceiptHandle": message["ReceiptHandle"], "VisibilityTimeout": "0"},
    )
    assert [m["Body"] for m in await receive(service, url)] == ["x"]


async def test_change_message_visibility_needs_a_timeout(service):
    url = await new_queue(service)
    await call(service, "SendMessage", {"QueueUrl": url, "MessageBody": "x"})
    [message] = await receive(service, url)
    error = await failure(
        service,
        "ChangeMessageVisibility",
        {"QueueUrl": url, "ReceiptHandle": message["ReceiptHandle"]},
    )
    assert error.message == "The request must contain the parameter VisibilityTimeout."


async def test_change_message_visibility_batch_answers_per_entry(service):
    url = await new_queue(service)
    await call(service, "SendMessage", {"QueueUrl": url, "MessageBody": "x"})
    [message] = await receive(service, url)
    result = await call(
        service,
        "ChangeMessageVisibilityBatch",
        {
            "QueueUrl": url,
            "Entries": [
                {"Id": "ok", "ReceiptHandle": message["ReceiptHandle"], "VisibilityTimeout": 10},
                {
                    "Id": "range",
                    "ReceiptHandle": message["ReceiptHandle"],
                    "VisibilityTimeout": 43201,
                },
            ],
        },
    )
    assert result["Successful"] == [{"Id": "ok"}]
    assert [(f["Id"], f["Code"]) for f in result["Failed"]] == [("range", "InvalidParameterValue")]


# --- permissions and move tasks (more in test_permissions.py, test_move_task_actions.py) --


async def test_add_permission_checks_its_parameters(service):
    url = await new_queue(service)
    missing = await failure(service, "AddPermission", {"QueueUrl": url})
    assert missing.name == "MissingParameter"
    params = {"QueueUrl": url, "Label": "l", "AWSAccountIds": ["1"], "Actions": ["SendMessage"]}
    assert await call(service, "AddPermission", params) == {}


async def test_start_message_move_task_needs_a_queue_arn(service):
    error = await failure(service, "StartMessageMoveTask", {"SourceArn": "nope"})
    assert error.name == "InvalidParameterValue"
