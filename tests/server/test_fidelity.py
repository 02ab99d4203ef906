"""AWS's recorded answers at the edges (issue 17, items 6-9 and 11-14), on both protocols
and both stores: message attribute validation, `*` for every attribute, FIFO-only
attributes on a standard queue, a FIFO batch without deduplication ids, resetting KMS,
cancelling a move task of a missing queue, empty tag calls, and FencingToken only by
name."""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Iterator

import pytest

from .protocols import Caller


@pytest.fixture(params=["json", "query"])
def caller(request: pytest.FixtureRequest, endpoint: str) -> Iterator[Caller]:
    client = Caller(request.param, endpoint)
    yield client
    client.close()


def new_queue(caller: Caller, suffix: str = "", **attributes: str) -> str:
    name = f"fidelity-{uuid.uuid4().hex[:8]}{suffix}"
    answer = caller("CreateQueue", QueueName=name, Attributes=attributes)
    assert answer.status == 200, answer
    return str(answer.value("QueueUrl"))


def fifo_queue(caller: Caller, **attributes: str) -> str:
    return new_queue(caller, ".fifo", FifoQueue="true", **attributes)


def string(value: str, data_type: str = "String") -> dict[str, str]:
    return {"DataType": data_type, "StringValue": value}


# --- 14: FencingToken only when named -------------------------------------------------


def test_all_system_attributes_leave_out_the_fencing_token_which_comes_when_named(caller):
    url = new_queue(caller)
    caller("SendMessage", QueueUrl=url, MessageBody="m")
    (first,) = caller(
        "ReceiveMessage", QueueUrl=url, VisibilityTimeout=0, MessageSystemAttributeNames=["All"]
    ).messages()
    assert "ApproximateReceiveCount" in first["Attributes"]
    assert "FencingToken" not in first["Attributes"]
    (second,) = caller(
        "ReceiveMessage", QueueUrl=url, MessageSystemAttributeNames=["All", "FencingToken"]
    ).messages()
    assert second["Attributes"]["FencingToken"].isdigit()


# --- 13: tag calls without tags ---------------------------------------------------------


def test_untag_queue_without_keys_is_an_invalid_parameter_value(caller):
    answer = caller("UntagQueue", QueueUrl=new_queue(caller), TagKeys=[])
    assert (answer.status, answer.code, answer.message) == (
        400,
        "InvalidParameterValue",
        "Tag keys must be between 1 and 128 characters in length.",
    )


def test_tag_queue_without_tags_is_a_missing_parameter(caller):
    answer = caller("TagQueue", QueueUrl=new_queue(caller), Tags={})
    assert (answer.status, answer.code, answer.message) == (
        400,
        "MissingParameter",
        "The request must contain the parameter Tags.",
    )


# --- 12: cancelling a move task of a queue that does not exist -----------------------


@pytest.mark.parametrize("account", ["000000000000", "123456789012"])
def test_cancel_move_task_naming_a_missing_source_is_resource_not_found(caller, account):
    arn = f"arn:aws:sqs:us-east-1:{account}:missing-{uuid.uuid4().hex[:8]}"
    handle = base64.b64encode(json.dumps({"taskId": "t", "sourceArn": arn}).encode()).decode()
    answer = caller("CancelMessageMoveTask", TaskHandle=handle)
    assert (answer.status, answer.code, answer.message) == (
        404,
        "ResourceNotFoundException",
        "The resource that you specified for the SourceArn parameter doesn't exist.",
    )


# --- 11: resetting KMS ----------------------------------------------------------------------


def test_resetting_the_kms_key_drops_both_kms_attributes_and_leaves_sse_off(caller):
    url = new_queue(caller, KmsMasterKeyId="alias/aws/sqs")
    before = caller("GetQueueAttributes", QueueUrl=url, AttributeNames=["All"]).attributes()
    assert before["KmsMasterKeyId"] == "alias/aws/sqs"
    reset = caller(
        "SetQueueAttributes",
        QueueUrl=url,
        Attributes={"KmsMasterKeyId": "", "KmsDataKeyReusePeriodSeconds": "300"},
    )
    assert reset.status == 200, reset
    after = caller("GetQueueAttributes", QueueUrl=url, AttributeNames=["All"]).attributes()
    assert "KmsMasterKeyId" not in after
    assert "KmsDataKeyReusePeriodSeconds" not in after
    assert after["SqsManagedSseEnabled"] == "false"


# --- 9: a FIFO batch with an entry lacking its deduplication id ------------------------


def test_fifo_batch_with_an_entry_without_dedup_id_fails_the_whole_call(caller):
    url = fifo_queue(caller)
    answer = caller(
        "SendMessageBatch",
        QueueUrl=url,
        Entries=[
            {"Id": "a", "MessageBody": "a", "MessageGroupId": "g", "MessageDeduplicationId": "a"},
            {"Id": "b", "MessageBody": "b", "MessageGroupId": "g"},
        ],
    )
    assert (answer.status, answer.code, answer.message) == (
        400,
        "InvalidParameterValue",
        "The queue should either have ContentBasedDeduplication enabled or "
        "MessageDeduplicationId provided explicitly",
    )
    # Nothing of the batch was sent.
    assert caller("ReceiveMessage", QueueUrl=url, MaxNumberOfMessages=10).messages() == []


# --- 8: FIFO-only attributes on a standard CreateQueue -------------------------------------


@pytest.mark.parametrize(
    ("attribute", "value", "message"),
    [
        ("FifoQueue", "false", "Unknown Attribute FifoQueue."),
        ("ContentBasedDeduplication", "true", "Unknown Attribute ContentBasedDeduplication."),
        (
            "DeduplicationScope",
            "queue",
            "You can specify the DeduplicationScope only when FifoQueue is set to true.",
        ),
        (
            "FifoThroughputLimit",
            "perQueue",
            "You can specify the FifoThroughputLimit only when FifoQueue is set to true.",
        ),
    ],
)
def test_fifo_only_attributes_on_a_standard_create_queue_are_invalid_names(
    caller, attribute, value, message
):
    answer = caller(
        "CreateQueue", QueueName=f"std-{uuid.uuid4().hex[:8]}", Attributes={attribute: value}
    )
    assert (answer.status, answer.code, answer.message) == (400, "InvalidAttributeName", message)


# --- 7: MessageAttributeNames=["*"] ------------------------------------------------------


def test_star_selects_every_message_attribute_with_their_digest(caller):
    url = new_queue(caller)
    sent = caller(
        "SendMessage",
        QueueUrl=url,
        MessageBody="m",
        MessageAttributes={"colour": string("blue"), "size": string("3", "Number")},
    )
    (message,) = caller("ReceiveMessage", QueueUrl=url, MessageAttributeNames=["*"]).messages()
    assert set(message["MessageAttributes"]) == {"colour", "size"}
    assert message["MD5OfMessageAttributes"] == sent.value("MD5OfMessageAttributes")


# --- 6: message attribute names, types and values ------------------------------------------


@pytest.mark.parametrize("name", ["attr.1\u00f8\u00df\u00e4", "\u00c0-\u017f_x"])
def test_latin_letters_beyond_ascii_are_allowed_in_attribute_names(caller, name):
    url = new_queue(caller)
    sent = caller("SendMessage", QueueUrl=url, MessageBody="m", MessageAttributes={
        name: string("v")
    })
    assert sent.status == 200, sent
    (message,) = caller("ReceiveMessage", QueueUrl=url, MessageAttributeNames=["All"]).messages()
    assert list(message["MessageAttributes"]) == [name]


@pytest.mark.parametrize(
    "name", ["AWS.x", "aws.x", "Amazon.x", "aMaZoN.x", ".x", "x.", "a" * 257, "snow\u2603"]
)
def test_reserved_dotted_long_or_foreign_attribute_names_are_invalid(caller, name):
    answer = caller(
        "SendMessage", QueueUrl=new_queue(caller), MessageBody="m",
        MessageAttributes={name: string("v")},
    )
    assert (answer.status, answer.code) == (400, "InvalidParameterValue")


def test_a_data_type_of_256_characters_is_refused_and_255_accepted(caller):
    url = new_queue(caller)
    ok = caller("SendMessage", QueueUrl=url, MessageBody="m", MessageAttributes={
        "a": string("v", "String." + "x" * 248)
    })
    assert ok.status == 200, ok
    answer = caller("SendMessage", QueueUrl=url, MessageBody="m", MessageAttributes={
        "a": string("v", "String." + "x" * 249)
    })
    assert (answer.status, answer.code) == (400, "InvalidParameterValue")


def test_a_forbidden_character_in_a_string_attribute_is_an_invalid_parameter_value(caller):
    answer = caller(
        "SendMessage", QueueUrl=new_queue(caller), MessageBody="m",
        MessageAttributes={"a": string("bell\u0008")},
    )
    assert (answer.status, answer.code) == (400, "InvalidParameterValue")
