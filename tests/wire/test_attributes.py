"""The queue attribute table, GetQueueAttributes rendering, and the attributes a
ReceiveMessage selects."""

from __future__ import annotations

import json

import pytest

from hopper.core.model import (
    DeadLetterRule,
    Delivery,
    MessageAttribute,
    QueueConfig,
    QueueKey,
    QueueRecord,
    QueueStats,
    StoredMessage,
)
from hopper.wire import attribute_names, message_attributes, queue_attributes
from hopper.wire.context import RequestContext
from hopper.wire.errors import SqsError

ACCOUNT = "000000000000"
CTX = RequestContext("json", ACCOUNT, "us-east-1", "http://h:1", None, None, "r")
DLQ_ARN = f"arn:aws:sqs:us-east-1:{ACCOUNT}:dlq"


def error_of(call, *args, **kwargs) -> SqsError:
    with pytest.raises(SqsError) as raised:
        call(*args, **kwargs)
    return raised.value


def test_settable_attributes_become_typed_config_fields():
    settings = queue_attributes.settings_from(
        {
            "VisibilityTimeout": "45",
            "MaximumMessageSize": "2048",
            "MessageRetentionPeriod": "60",
            "DelaySeconds": "900",
            "ReceiveMessageWaitTimeSeconds": "20",
        },
    )
    assert settings == {
        "visibility_timeout": 45.0,
        "maximum_message_size": 2048,
        "message_retention_period": 60.0,
        "delay_seconds": 900.0,
        "receive_message_wait_time_seconds": 20.0,
    }


def test_echoed_attributes_go_under_extra_by_their_sqs_name():
    settings = queue_attributes.settings_from(
        {"Policy": "{}", "KmsMasterKeyId": "alias/k", "SqsManagedSseEnabled": "FALSE"}
    )
    # (KMS and SQS-managed encryption together are refused: test_permissions.py.)
    assert settings == {
        "extra": {"Policy": "{}", "KmsMasterKeyId": "alias/k", "SqsManagedSseEnabled": "false"}
    }


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("VisibilityTimeout", "43201"),
        ("VisibilityTimeout", "-1"),
        ("VisibilityTimeout", "abc"),
        ("MaximumMessageSize", "1023"),
        ("MaximumMessageSize", "1048577"),
        ("MessageRetentionPeriod", "59"),
        ("MessageRetentionPeriod", "1209601"),
        ("DelaySeconds", "901"),
        ("ReceiveMessageWaitTimeSeconds", "21"),
        ("KmsDataKeyReusePeriodSeconds", "59"),
        ("FifoQueue", "yes"),
        ("Policy", "not json"),
    ],
)
def test_a_value_out_of_range_is_an_invalid_attribute_value(name, text):
    error = error_of(queue_attributes.settings_from, {name: text})
    assert (error.name, error.message) == (
        "InvalidAttributeValue",
        f"Invalid value for the parameter {name}.",
    )


@pytest.mark.parametrize("name", ["Bogus", "QueueArn", "ApproximateNumberOfMessages"])
def test_unknown_and_read_only_attributes_cannot_be_set(name):
    error = error_of(queue_attributes.settings_from, {name: "1"})
    assert (error.name, error.message) == ("InvalidAttributeName", f"Unknown Attribute {name}.")


def test_fifo_only_echoed_attributes_are_parsed_for_the_core_to_rule_on():
    # Whether the queue takes them is the core's rule (core/queues.py).
    assert queue_attributes.settings_from({"DeduplicationScope": "queue"}) == {
        "extra": {"DeduplicationScope": "queue"}
    }


def test_a_redrive_policy_becomes_a_dead_letter_rule():
    text = json.dumps({"deadLetterTargetArn": DLQ_ARN, "maxReceiveCount": "5"})
    assert queue_attributes.settings_from({"RedrivePolicy": text}) == {
        "dead_letter": DeadLetterRule(QueueKey(ACCOUNT, "dlq"), 5)
    }


def test_an_empty_redrive_policy_removes_the_rule():
    assert queue_attributes.settings_from({"RedrivePolicy": ""}) == {"dead_letter": None}


@pytest.mark.parametrize(
    "policy",
    [
        "nope",
        json.dumps({"maxReceiveCount": 3}),
        json.dumps({"deadLetterTargetArn": "dlq", "maxReceiveCount": 3}),
        json.dumps({"deadLetterTargetArn": DLQ_ARN, "maxReceiveCount": 0}),
        json.dumps({"deadLetterTargetArn": DLQ_ARN, "maxReceiveCount": 1001}),
    ],
)
def test_a_malformed_redrive_policy_is_refused(policy):
    error = error_of(queue_attributes.settings_from, {"RedrivePolicy": policy})
    assert error.name == "InvalidParameterValue"
    assert error.message.startswith(f"Value {policy} for parameter RedrivePolicy is invalid.")


def test_config_fields_are_named_as_sqs_names_them():
    assert attribute_names.sqs_attribute_name("visibility_timeout") == "VisibilityTimeout"
    assert attribute_names.sqs_attribute_name("dead_letter") == "RedrivePolicy"
    assert attribute_names.sqs_attribute_name("fifo") == "FifoQueue"
    assert attribute_names.sqs_attribute_name("Policy") == "Policy"


def record(name: str = "q", **config) -> QueueRecord:
    return QueueRecord(
        QueueKey(ACCOUNT, name), QueueConfig(**config), created_at=1700.9, last_modified_at=1800.2
    )


def test_all_attributes_of_a_standard_queue():
    names = queue_attributes.check_queue_attribute_names(["All"])
    values = queue_attributes.queue_attributes(CTX, record(), QueueStats(3, 2, 1), names)
    assert values == {
        "QueueArn": f"arn:aws:sqs:us-east-1:{ACCOUNT}:q",
        "ApproximateNumberOfMessages": "3",
        "ApproximateNumberOfMessagesNotVisible": "2",
        "ApproximateNumberOfMessagesDelayed": "1",
        "CreatedTimestamp": "1700",
        "LastModifiedTimestamp": "1800",
        "VisibilityTimeout": "30",
        "MaximumMessageSize": "1048576",
        "MessageRetentionPeriod": "345600",
        "DelaySeconds": "0",
        "ReceiveMessageWaitTimeSeconds": "0",
        "SqsManagedSseEnabled": "true",
    }


def test_a_fifo_queue_also_has_its_fifo_attributes():
    names = queue_attributes.check_queue_attribute_names(["All"])
    values = queue_attributes.queue_attributes(CTX, record("q.fifo", fifo=True), None, names)
    assert values["FifoQueue"] == "true"
    assert values["ContentBasedDeduplication"] == "false"
    assert values["DeduplicationScope"] == "queue"
    assert values["FifoThroughputLimit"] == "perQueue"


def test_the_redrive_policy_is_compact_json_with_the_target_first():
    rule = DeadLetterRule(QueueKey(ACCOUNT, "dlq"), 4)
    values = queue_attributes.queue_attributes(
        CTX, record(dead_letter=rule), None, ["RedrivePolicy"]
    )
    assert values == {"RedrivePolicy": f'{{"deadLetterTargetArn":"{DLQ_ARN}","maxReceiveCount":4}}'}


def test_only_the_named_attributes_are_returned():
    names = queue_attributes.check_queue_attribute_names(["DelaySeconds", "VisibilityTimeout"])
    assert queue_attributes.queue_attributes(CTX, record(), None, names) == {
        "VisibilityTimeout": "30",
        "DelaySeconds": "0",
    }
    assert not queue_attributes.needs_stats(names)


def test_an_unknown_attribute_name_cannot_be_asked_for():
    error = error_of(queue_attributes.check_queue_attribute_names, ["Nope"])
    assert (error.name, error.message) == ("InvalidAttributeName", "Unknown Attribute Nope.")


def delivery(**message) -> Delivery:
    stored = StoredMessage(
        id="m",
        body="b",
        attributes=message.pop("attributes", {}),
        trace_header=None,
        sent_at=1700000000.1234,
        **message,
    )
    return Delivery(
        stored, token=17, receive_count=2, first_received_at=1700000001.5, visible_at=1700000031.5
    )


def test_all_system_attributes_are_exactly_aws_ones_without_the_fencing_token():
    assert message_attributes.system_attributes(CTX, delivery(group_id="g"), ["All"]) == {
        "SenderId": ACCOUNT,
        "SentTimestamp": "1700000000123",
        "ApproximateReceiveCount": "2",
        "ApproximateFirstReceiveTimestamp": "1700000001500",
        "MessageGroupId": "g",
    }


def test_the_fencing_token_comes_with_all_when_also_named():
    selected = message_attributes.system_attributes(CTX, delivery(), ["All", "FencingToken"])
    assert selected["FencingToken"] == "17"


def test_system_attributes_are_selected_by_name():
    selected = message_attributes.system_attributes(
        CTX, delivery(), ["ApproximateReceiveCount", "FencingToken", "SequenceNumber"]
    )
    assert selected == {"ApproximateReceiveCount": "2", "FencingToken": "17"}


def test_a_dead_lettered_message_names_its_source_queue():
    moved = delivery(dead_letter_source=QueueKey(ACCOUNT, "src"))
    assert message_attributes.system_attributes(CTX, moved, ["DeadLetterQueueSourceArn"]) == {
        "DeadLetterQueueSourceArn": f"arn:aws:sqs:us-east-1:{ACCOUNT}:src"
    }


USER = {
    "a.x": MessageAttribute("String", string_value="1"),
    "a.y": MessageAttribute("String", string_value="2"),
    "ab": MessageAttribute("Binary", binary_value=b"\x01"),
}


@pytest.mark.parametrize(
    ("requested", "expected"),
    [
        (["All"], {"a.x", "a.y", "ab"}),
        ([".*"], {"a.x", "a.y", "ab"}),
        (["a.*"], {"a.x", "a.y", "ab"}),  # the prefix is "a", not "a."
        (["a.x.*"], {"a.x"}),
        (["b.*"], set()),
        (["ab", "missing"], {"ab"}),
        ([], set()),
    ],
)
def test_message_attributes_are_selected_by_name_prefix_or_all(requested, expected):
    assert set(message_attributes.select_message_attributes(USER, requested)) == expected


def test_a_binary_attribute_value_stays_bytes_for_the_renderers():
    value = message_attributes.attribute_value(USER["ab"])
    assert value == {"DataType": "Binary", "BinaryValue": b"\x01"}
