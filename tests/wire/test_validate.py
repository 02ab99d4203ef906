"""Reading parameters: JSON values and query strings are read by the same rules."""

from __future__ import annotations

import base64

import pytest

from hopper.core.model import MessageAttribute
from hopper.wire import validate
from hopper.wire.context import RequestContext
from hopper.wire.errors import SqsError

CTX = RequestContext("json", "000000000000", "us-east-1", "http://h:1", None, None, "r")


def error_of(call, *args) -> SqsError:
    with pytest.raises(SqsError) as raised:
        call(*args)
    return raised.value


@pytest.mark.parametrize("value", [5, "5", " 5 ", 5.0])
def test_an_integer_is_read_from_a_json_number_or_a_query_string(value):
    assert validate.as_int({"MaxNumberOfMessages": value}, "MaxNumberOfMessages") == 5


@pytest.mark.parametrize("value", ["abc", "3.5", 3.5, True, "", [1]])
def test_a_non_integer_is_an_invalid_parameter_value(value):
    error = error_of(validate.as_int, {"WaitTimeSeconds": value}, "WaitTimeSeconds")
    assert error.name == "InvalidParameterValue"
    assert "WaitTimeSeconds" in error.message


def test_an_absent_integer_is_none():
    assert validate.as_int({}, "DelaySeconds") is None


@pytest.mark.parametrize(("value", "expected"), [(True, True), ("true", True), ("False", False)])
def test_a_boolean_is_read_from_json_or_query_text(value, expected):
    assert validate.as_bool({"b": value}, "b") is expected


def test_a_missing_required_parameter_is_missing_parameter_in_aws_words():
    error = error_of(validate.required_str, {}, "QueueName")
    assert (error.name, error.message) == (
        "MissingParameter",
        "The request must contain the parameter QueueName.",
    )


def test_string_and_number_attributes_keep_their_text():
    decoded = validate.message_attributes(
        {
            "s": {"DataType": "String", "StringValue": "x"},
            "n": {"DataType": "Number.int", "StringValue": "12"},
        }
    )
    assert decoded == {
        "s": MessageAttribute("String", string_value="x"),
        "n": MessageAttribute("Number.int", string_value="12"),
    }


def test_a_binary_attribute_is_decoded_from_base64():
    text = base64.b64encode(b"\x00\xff").decode()
    decoded = validate.message_attributes({"b": {"DataType": "Binary.gif", "BinaryValue": text}})
    assert decoded["b"] == MessageAttribute("Binary.gif", binary_value=b"\x00\xff")


def test_bad_base64_is_an_invalid_parameter_value():
    error = error_of(
        validate.message_attributes, {"b": {"DataType": "Binary", "BinaryValue": "***"}}
    )
    assert error.name == "InvalidParameterValue"


def test_an_attribute_without_a_data_type_is_an_invalid_parameter_value():
    error = error_of(validate.message_attributes, {"a": {"StringValue": "x"}})
    assert error.name == "InvalidParameterValue"
    assert "'a'" in error.message


def test_the_trace_header_comes_from_the_system_attribute():
    raw = {"AWSTraceHeader": {"DataType": "String", "StringValue": "Root=1-abc"}}
    assert validate.trace_header(raw, CTX) == "Root=1-abc"


def test_without_the_system_attribute_the_trace_header_comes_from_the_request_header():
    ctx = RequestContext("json", "0", "r", "http://h", None, "Root=1-hdr", "r")
    assert validate.trace_header(None, ctx) == "Root=1-hdr"


def test_no_other_system_attribute_may_be_sent():
    raw = {"SenderId": {"DataType": "String", "StringValue": "x"}}
    assert error_of(validate.trace_header, raw, CTX).name == "InvalidParameterValue"


def test_the_trace_header_must_be_a_string_attribute():
    raw = {"AWSTraceHeader": {"DataType": "Number", "StringValue": "1"}}
    assert error_of(validate.trace_header, raw, CTX).name == "InvalidParameterValue"


def entries(count: int) -> dict:
    return {"Entries": [{"Id": f"e{i}"} for i in range(count)]}


def test_an_empty_batch_names_its_entry_type():
    error = error_of(validate.batch_entries, {"Entries": []}, "SendMessageBatchRequestEntry")
    assert (error.name, error.message) == (
        "EmptyBatchRequest",
        "There should be at least one SendMessageBatchRequestEntry in the request.",
    )


def test_a_batch_without_entries_is_an_empty_batch():
    error = error_of(validate.batch_entries, {}, "DeleteMessageBatchRequestEntry")
    assert error.name == "EmptyBatchRequest"


def test_more_than_ten_entries_are_too_many():
    error = error_of(validate.batch_entries, entries(11), "SendMessageBatchRequestEntry")
    assert (error.name, error.message) == (
        "TooManyEntriesInBatchRequest",
        "Maximum number of entries per request are 10. You have sent 11.",
    )


def test_ten_entries_are_accepted():
    assert len(validate.batch_entries(entries(10), "SendMessageBatchRequestEntry")) == 10


@pytest.mark.parametrize("entry_id", ["a.b", "", "x" * 81, "sp ace", 5])
def test_an_entry_id_outside_the_alphabet_or_length_is_invalid(entry_id):
    error = error_of(validate.batch_entries, {"Entries": [{"Id": entry_id}]}, "E")
    assert error.name == "InvalidBatchEntryId"


def test_an_entry_without_an_id_is_missing_its_parameter():
    error = error_of(validate.batch_entries, {"Entries": [{"Id": "a"}, {}]}, "SendEntry")
    assert error.message == "The request must contain the parameter SendEntry.2.Id."


def test_repeated_entry_ids_are_not_distinct():
    error = error_of(validate.batch_entries, {"Entries": [{"Id": "a"}, {"Id": "a"}]}, "E")
    assert (error.name, error.message) == ("BatchEntryIdsNotDistinct", "Id a repeated.")


# --- hostile numbers and requests (issue 16) ------------------------------------------


@pytest.mark.parametrize(
    "value", ["9" * 4_400, "-" + "9" * 4_400, "²", "٣", 10**400, -(10**30), 1e300, float("inf"),
              float("nan"), "1" * 19],
)
def test_a_number_no_sqs_integer_can_be_is_an_invalid_parameter_value(value):
    error = error_of(validate.as_int, {"VisibilityTimeout": value}, "VisibilityTimeout")
    assert error.name == "InvalidParameterValue"


def test_leading_zeros_do_not_count_against_an_integers_digits():
    assert validate.parse_integer("0" * 5_000 + "42") == 42


@pytest.mark.parametrize(
    "params",
    [
        {"QueueUrl": "q\x00"},
        {"Tags": {"k": "a\x01"}},
        {"Tags": {"k\ud800": "v"}},
        {"AttributeNames": ["All", "\x1f"]},
        {"\x00": "v"},
        {"QueueName": [[[[[[[[["deep"]]]]]]]]]},
    ],
)
def test_a_request_with_text_outside_sqs_characters_or_nested_too_deep_is_refused(params):
    assert error_of(validate.check_request, params).name == "InvalidParameterValue"


def test_message_contents_and_batch_entries_are_left_to_their_own_rules():
    # no error is raised for them (check_request answers nothing when it lets one pass)
    assert validate.check_request({
        "MessageBody": "a\x01",
        "MessageAttributes": {"a": {"DataType": "String", "StringValue": "\x00"}},
        "MessageSystemAttributes": {"AWSTraceHeader": {"StringValue": "\ud800"}},
        "Entries": [{"Id": "e", "ReceiptHandle": "\x00"}],
    }) is None
    # where the same texts under a parameter without rules of its own are refused
    for text in ("a\x01", "\x00", "\ud800"):
        assert error_of(validate.check_request, {"QueueName": text}).name == (
            "InvalidParameterValue"
        )


def test_a_refusal_does_not_quote_a_structure():
    error = error_of(validate.as_int, {"DelaySeconds": [[1]]}, "DelaySeconds")
    assert "[...]" in error.message
