"""Decoding requests of both SQS protocols into (action, params) in the JSON shape."""

from __future__ import annotations

from collections.abc import AsyncIterator
from urllib.parse import urlencode

import pytest

from hopper.core.model import QueueKey
from hopper.wire import protocol
from hopper.wire.errors import SqsError
from hopper.wire.protocol import (
    check_endpoint,
    decode_json,
    decode_query,
    detect_protocol,
    read_bounded,
)


def query(fields: dict[str, str], *, method: str = "POST", queue_path: bool = False):
    encoded = urlencode(fields).encode()
    if method == "GET":
        return decode_query("GET", encoded, b"", on_queue_path=queue_path)
    return decode_query("POST", b"", encoded, on_queue_path=queue_path)


def error_of(call) -> SqsError:
    with pytest.raises(SqsError) as caught:
        call()
    return caught.value


# --- detection ------------------------------------------------------------------------


def test_a_request_with_an_amz_target_is_json():
    assert detect_protocol({"x-amz-target": "AmazonSQS.ListQueues"}) == "json"


def test_a_request_with_the_amz_json_content_type_is_json():
    assert detect_protocol({"content-type": "application/x-amz-json-1.0"}) == "json"


def test_a_form_encoded_request_is_query():
    assert detect_protocol({"content-type": "application/x-www-form-urlencoded"}) == "query"


def test_a_request_without_content_type_or_target_is_query():
    assert detect_protocol({}) == "query"


# --- JSON ---------------------------------------------------------------------------


def test_json_action_comes_from_the_target_and_params_from_the_body():
    action, params = decode_json("AmazonSQS.SendMessage", b'{"QueueUrl": "u", "DelaySeconds": 5}')
    assert action == "SendMessage"
    assert params == {"QueueUrl": "u", "DelaySeconds": 5}


def test_json_empty_body_is_no_parameters():
    assert decode_json("AmazonSQS.ListQueues", b"") == ("ListQueues", {})


@pytest.mark.parametrize("target", [None, "", "ListQueues", "AmazonSNS.Publish", "AmazonSQS."])
def test_json_without_a_valid_target_is_invalid_action(target):
    error = error_of(lambda: decode_json(target, b"{}"))
    assert error.name == "InvalidAction"
    assert error.code.json_type.endswith("#UnknownOperationException")


@pytest.mark.parametrize("body", [b"{", b"not json", b"\xff\xfe", b"[1, 2]", b'"text"', b"3"])
def test_json_body_that_is_not_an_object_is_a_serialization_exception(body):
    error = error_of(lambda: decode_json("AmazonSQS.ListQueues", body))
    assert error.name == "SerializationException"
    assert error.code.status == 400


# --- query: scalars, GET and POST ------------------------------------------------------


def test_query_scalars_stay_strings():
    action, params = query(
        {"Action": "ReceiveMessage", "QueueUrl": "u", "MaxNumberOfMessages": "5", "Version": "x"}
    )
    assert action == "ReceiveMessage"
    assert params == {"QueueUrl": "u", "MaxNumberOfMessages": "5"}


def test_query_parameters_are_read_from_a_get_query_string():
    action, params = query({"Action": "GetQueueUrl", "QueueName": "q"}, method="GET")
    assert (action, params) == ("GetQueueUrl", {"QueueName": "q"})


def test_a_post_body_wins_over_its_query_string():
    _, params = decode_query(
        "POST", b"Action=GetQueueUrl&QueueName=a", b"QueueName=b", on_queue_path=False
    )
    assert params == {"QueueName": "b"}


def test_query_values_are_percent_decoded_as_utf8():
    _, params = query({"Action": "SendMessage", "QueueUrl": "u", "MessageBody": "héllo & ✓"})
    assert params["MessageBody"] == "héllo & ✓"


def test_query_body_that_is_not_utf8_is_a_serialization_exception():
    error = error_of(
        lambda: decode_query("POST", b"", b"Action=ListQueues&X=%ff", on_queue_path=False)
    )
    assert error.name == "SerializationException"


# --- query: maps ---------------------------------------------------------------------


def test_query_attribute_entries_become_the_attributes_map():
    _, params = query({
        "Action": "CreateQueue", "QueueName": "q",
        "Attribute.1.Name": "VisibilityTimeout", "Attribute.1.Value": "40",
        "Attribute.2.Name": "DelaySeconds", "Attribute.2.Value": "0",
    })
    assert params == {
        "QueueName": "q", "Attributes": {"VisibilityTimeout": "40", "DelaySeconds": "0"}
    }


def test_query_create_queue_tags_become_the_lowercase_tags_map():
    _, params = query({
        "Action": "CreateQueue", "QueueName": "q", "Tag.1.Key": "team", "Tag.1.Value": "blue",
    })
    assert params["tags"] == {"team": "blue"}


def test_query_tag_queue_tags_become_the_tags_map():
    _, params = query({"Action": "TagQueue", "QueueUrl": "u", "Tag.1.Key": "a", "Tag.1.Value": ""})
    assert params == {"QueueUrl": "u", "Tags": {"a": ""}}


def test_query_message_attributes_become_nested_values():
    _, params = query({
        "Action": "SendMessage", "QueueUrl": "u", "MessageBody": "b",
        "MessageAttribute.1.Name": "colour",
        "MessageAttribute.1.Value.DataType": "String",
        "MessageAttribute.1.Value.StringValue": "red",
        "MessageAttribute.2.Name": "blob",
        "MessageAttribute.2.Value.DataType": "Binary",
        "MessageAttribute.2.Value.BinaryValue": "aGk=",
    })
    assert params["MessageAttributes"] == {
        "colour": {"DataType": "String", "StringValue": "red"},
        "blob": {"DataType": "Binary", "BinaryValue": "aGk="},
    }


def test_query_message_system_attributes_become_nested_values():
    _, params = query({
        "Action": "SendMessage", "QueueUrl": "u", "MessageBody": "b",
        "MessageSystemAttribute.1.Name": "AWSTraceHeader",
        "MessageSystemAttribute.1.Value.DataType": "String",
        "MessageSystemAttribute.1.Value.StringValue": "Root=1",
    })
    assert params["MessageSystemAttributes"] == {
        "AWSTraceHeader": {"DataType": "String", "StringValue": "Root=1"}
    }


def test_query_map_entry_without_its_name_is_dropped():
    _, params = query({
        "Action": "SetQueueAttributes", "QueueUrl": "u",
        "Attribute.1.Value": "5", "Attribute.2.Name": "DelaySeconds", "Attribute.2.Value": "1",
    })
    assert params["Attributes"] == {"DelaySeconds": "1"}


def test_query_map_entry_without_its_value_has_an_empty_value():
    _, params = query({"Action": "SetQueueAttributes", "QueueUrl": "u", "Attribute.1.Name": "A"})
    assert params["Attributes"] == {"A": ""}


# --- query: lists ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("action", "name", "member"),
    [
        ("GetQueueAttributes", "AttributeName", "AttributeNames"),
        ("ReceiveMessage", "AttributeName", "AttributeNames"),
        ("ReceiveMessage", "MessageAttributeName", "MessageAttributeNames"),
        ("ReceiveMessage", "MessageSystemAttributeName", "MessageSystemAttributeNames"),
        ("UntagQueue", "TagKey", "TagKeys"),
        ("AddPermission", "AWSAccountId", "AWSAccountIds"),
        ("AddPermission", "ActionName", "Actions"),
    ],
)
def test_query_numbered_names_become_a_list(action, name, member):
    _, params = query({"Action": action, "QueueUrl": "u", f"{name}.1": "a", f"{name}.2": "b"})
    assert params[member] == ["a", "b"]


def test_query_list_is_ordered_by_number_not_by_text():
    fields = {"Action": "UntagQueue", "QueueUrl": "u"}
    fields.update({f"TagKey.{n}": f"k{n}" for n in (10, 2, 1)})
    _, params = query(fields)
    assert params["TagKeys"] == ["k1", "k2", "k10"]


def test_query_send_batch_entries_become_a_list_of_structures():
    _, params = query({
        "Action": "SendMessageBatch", "QueueUrl": "u",
        "SendMessageBatchRequestEntry.1.Id": "a",
        "SendMessageBatchRequestEntry.1.MessageBody": "one",
        "SendMessageBatchRequestEntry.1.DelaySeconds": "3",
        "SendMessageBatchRequestEntry.2.Id": "b",
        "SendMessageBatchRequestEntry.2.MessageBody": "two",
        "SendMessageBatchRequestEntry.2.MessageAttribute.1.Name": "n",
        "SendMessageBatchRequestEntry.2.MessageAttribute.1.Value.DataType": "Number",
        "SendMessageBatchRequestEntry.2.MessageAttribute.1.Value.StringValue": "7",
        "SendMessageBatchRequestEntry.2.MessageGroupId": "g",
    })
    assert params["Entries"] == [
        {"Id": "a", "MessageBody": "one", "DelaySeconds": "3"},
        {
            "Id": "b", "MessageBody": "two", "MessageGroupId": "g",
            "MessageAttributes": {"n": {"DataType": "Number", "StringValue": "7"}},
        },
    ]


def test_query_delete_and_visibility_batch_entries_become_lists():
    _, deletes = query({
        "Action": "DeleteMessageBatch", "QueueUrl": "u",
        "DeleteMessageBatchRequestEntry.1.Id": "a",
        "DeleteMessageBatchRequestEntry.1.ReceiptHandle": "r",
    })
    _, changes = query({
        "Action": "ChangeMessageVisibilityBatch", "QueueUrl": "u",
        "ChangeMessageVisibilityBatchRequestEntry.1.Id": "a",
        "ChangeMessageVisibilityBatchRequestEntry.1.ReceiptHandle": "r",
        "ChangeMessageVisibilityBatchRequestEntry.1.VisibilityTimeout": "9",
    })
    assert deletes["Entries"] == [{"Id": "a", "ReceiptHandle": "r"}]
    assert changes["Entries"] == [{"Id": "a", "ReceiptHandle": "r", "VisibilityTimeout": "9"}]


def test_query_absent_lists_and_maps_are_absent_members():
    _, params = query({"Action": "ReceiveMessage", "QueueUrl": "u"})
    assert params == {"QueueUrl": "u"}


# --- query: actions and endpoints --------------------------------------------------------


def test_query_post_without_action_is_missing_parameter():
    error = error_of(lambda: query({"QueueName": "q"}))
    assert error.name == "MissingParameter"
    assert error.message == "The request must contain the parameter Action."


@pytest.mark.parametrize("queue_path", [False, True])
def test_query_get_without_action_is_an_unknown_operation_404(queue_path):
    error = error_of(lambda: query({}, method="GET", queue_path=queue_path))
    assert error.name == "UnknownOperationException"
    assert error.code.status == 404


def test_query_unknown_action_is_invalid_action():
    error = error_of(lambda: query({"Action": "Frobnicate"}))
    assert error.name == "InvalidAction"
    assert error.message == "The action Frobnicate is not valid for this endpoint."
    assert error.code.query_code == "InvalidAction"


@pytest.mark.parametrize("action", ["CreateQueue", "ListQueues"])
def test_service_actions_sent_to_a_queue_url_are_invalid_action(action):
    error = error_of(lambda: check_endpoint(action, QueueKey("000000000000", "q")))
    assert error.name == "InvalidAction"
    assert error.message == f"The action {action} is not valid for this endpoint."


def test_queue_actions_may_be_sent_to_a_queue_url():
    on_queue = QueueKey("000000000000", "q")
    # no error is raised for them (check_endpoint answers nothing when it lets one pass)
    assert check_endpoint("SendMessage", on_queue) is None
    assert check_endpoint("GetQueueUrl", on_queue) is None  # AWS answers it there
    assert check_endpoint("CreateQueue", None) is None
    # where a service action on the same URL is refused
    assert error_of(lambda: check_endpoint("CreateQueue", on_queue)).name == "InvalidAction"


# --- the body bound -----------------------------------------------------------------------


async def chunks(*parts: bytes) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


async def untouchable() -> AsyncIterator[bytes]:
    raise AssertionError("the body was read although its declared length is too large")
    yield b""  # pragma: no cover


async def test_body_within_the_bound_is_read_whole():
    assert await read_bounded(chunks(b"ab", b"cd"), "4", 4) == b"abcd"


async def test_body_declared_too_large_is_refused_before_it_is_read():
    with pytest.raises(SqsError) as caught:
        await read_bounded(untouchable(), "5", 4)
    assert caught.value.name == "RequestEntityTooLarge"
    assert caught.value.code.status == 413


@pytest.mark.parametrize("declared", [None, "1", "garbage"])
async def test_body_that_streams_past_the_bound_is_refused(declared):
    with pytest.raises(SqsError) as caught:
        await read_bounded(chunks(b"abc", b"de"), declared, 4)
    assert caught.value.name == "RequestEntityTooLarge"


# --- query: over-long lists are refused before they are decoded -----------------------


def _attributes(count: int) -> dict[str, str]:
    fields = {"Action": "SendMessage", "MessageBody": "x"}
    for i in range(1, count + 1):
        fields[f"MessageAttribute.{i}.Name"] = f"a{i}"
        fields[f"MessageAttribute.{i}.Value.DataType"] = "String"
        fields[f"MessageAttribute.{i}.Value.StringValue"] = "v"
    return fields


def test_ten_message_attributes_decode_and_eleven_are_refused_as_aws_words_it():
    _, params = query(_attributes(10))
    assert len(params["MessageAttributes"]) == 10
    error = error_of(lambda: query(_attributes(11)))
    assert error.name == "InvalidParameterValue"
    assert "Number of message attributes [11] exceeds the allowed maximum [10]" in error.message


@pytest.mark.parametrize(
    "action", ["SendMessageBatch", "DeleteMessageBatch", "ChangeMessageVisibilityBatch"]
)
def test_eleven_batch_entries_are_too_many_entries(action):
    fields = {"Action": action}
    for i in range(1, 12):
        fields[f"{action}RequestEntry.{i}.Id"] = f"e{i}"
    error = error_of(lambda: query(fields))
    assert error.name == "TooManyEntriesInBatchRequest"
    assert error.message == "Maximum number of entries per request are 10. You have sent 11."


def test_fifty_one_tags_in_one_request_are_too_many():
    fields = {"Action": "TagQueue", "QueueUrl": "q"}
    for i in range(1, 52):
        fields[f"Tag.{i}.Key"], fields[f"Tag.{i}.Value"] = f"k{i}", "v"
    error = error_of(lambda: query(fields))
    assert error.name == "InvalidParameterValue"
    assert "The limit is 50" in error.message


def test_a_list_without_an_aws_limit_is_bounded_too():
    fields = {"Action": "GetQueueAttributes", "QueueUrl": "q"}
    fields.update({f"AttributeName.{i}": "All" for i in range(1, 102)})
    assert error_of(lambda: query(fields)).name == "InvalidParameterValue"


@pytest.mark.parametrize("index", ["\u00b2", "01", "1" * 5000, "-1", "x"])
def test_a_list_index_that_is_not_a_plain_number_is_not_an_entry(index):
    _, params = query({"Action": "GetQueueAttributes", "QueueUrl": "q",
                       f"AttributeName.{index}": "All", "AttributeName.2": "Policy"})
    assert params["AttributeNames"] == ["Policy"]


def test_list_entries_come_in_numeric_order_whatever_their_order_in_the_request():
    _, params = query({"Action": "GetQueueAttributes", "QueueUrl": "q",
                       "AttributeName.10": "Policy", "AttributeName.9": "All",
                       "AttributeName.1": "QueueArn"})
    assert params["AttributeNames"] == ["QueueArn", "All", "Policy"]



async def _chunks(*parts: bytes) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


async def test_a_content_length_of_non_ascii_digits_is_judged_by_the_bytes_that_arrive() -> None:
    assert await protocol.read_bounded(_chunks(b"abc"), "\u00b2", 10) == b"abc"


async def test_a_content_length_of_thousands_of_digits_is_too_large() -> None:
    with pytest.raises(SqsError):
        await protocol.read_bounded(_chunks(b"abc"), "9" * 5000, 10)
