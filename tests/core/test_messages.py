"""Message rules: what a send may contain, and how its size is counted."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from hopper.core.errors import (
    InvalidMessageContents,
    InvalidParameter,
    MessageTooLong,
    MissingParameter,
)
from hopper.core.messages import check_batch, prepare, size
from hopper.core.model import MessageAttribute, MessageDraft, QueueConfig

STANDARD = QueueConfig()
FIFO = QueueConfig(fifo=True)
FIFO_CONTENT = QueueConfig(fifo=True, content_based_deduplication=True)


def draft(body: str = "hello", **overrides: Any) -> MessageDraft:
    return MessageDraft(body=body, **overrides)


def text(value: str, data_type: str = "String") -> MessageAttribute:
    return MessageAttribute(data_type, string_value=value)


def test_size_counts_body_bytes_and_each_attribute_name_type_and_value() -> None:
    message = draft(
        "h\u00e9",  # 3 bytes
        attributes={
            "ab": text("xyz"),  # 2 + 6 + 3
            "c": MessageAttribute("Binary", binary_value=b"\x00\x01"),  # 1 + 6 + 2
        },
    )
    assert size(message) == 3 + 11 + 9


def test_empty_body_is_a_missing_parameter() -> None:
    with pytest.raises(MissingParameter) as caught:
        prepare(draft(""), STANDARD, "id")
    assert caught.value.parameter == "MessageBody"


@pytest.mark.parametrize("body", ["\x00", "a\x08b", "\ud800", "\ufffe", "\uffff"])
def test_characters_outside_sqs_set_are_invalid_contents(body: str) -> None:
    with pytest.raises(InvalidMessageContents):
        prepare(draft(body), STANDARD, "id")


@pytest.mark.parametrize("body", ["\t\n\r", " ~", "\ud7ff\ue000\ufffd", "\U00010000\U0010ffff"])
def test_characters_inside_sqs_set_are_accepted(body: str) -> None:
    assert prepare(draft(body), STANDARD, "id").body == body


def test_a_message_of_exactly_the_maximum_size_passes_and_one_byte_more_fails() -> None:
    config = QueueConfig(maximum_message_size=1024)
    attrs = {"n": text("v")}  # 1 + 6 + 1 = 8 bytes
    assert prepare(draft("x" * 1016, attributes=attrs), config, "id").body == "x" * 1016
    with pytest.raises(MessageTooLong) as caught:
        prepare(draft("x" * 1017, attributes=attrs), config, "id")
    assert (caught.value.size, caught.value.limit) == (1025, 1024)


def test_ten_attributes_pass_and_eleven_fail() -> None:
    ten = {f"a{i}": text("v") for i in range(10)}
    assert len(prepare(draft(attributes=ten), STANDARD, "id").attributes) == 10
    with pytest.raises(InvalidParameter):
        prepare(draft(attributes={**ten, "eleven": text("v")}), STANDARD, "id")


@pytest.mark.parametrize(
    "name",
    [".lead", "trail.", "two..dots", "sp ace", "AWS.x", "amazon.y", "aMaZoN.z", "a" * 257, "",
     "snow\u2603", "x\u0180"],
)
def test_bad_attribute_names_are_invalid(name: str) -> None:
    with pytest.raises(InvalidParameter):
        prepare(draft(attributes={name: text("v")}), STANDARD, "id")


@pytest.mark.parametrize(
    "name", ["a.b", "A-b_c.9", "a" * 256, "awsish", "Amazonian", "attr.1\u00f8\u00df\u00e4",
             "\u00c0\u017f"]
)
def test_good_attribute_names_pass(name: str) -> None:
    assert name in prepare(draft(attributes={name: text("v")}), STANDARD, "id").attributes


@pytest.mark.parametrize("data_type", ["String", "Number", "Binary", "String.x", "Number.float"])
def test_data_types_are_string_number_or_binary_with_an_optional_suffix(data_type: str) -> None:
    attribute = (
        MessageAttribute(data_type, binary_value=b"1")
        if data_type.startswith("Binary")
        else text("1", data_type)
    )
    assert prepare(draft(attributes={"a": attribute}), STANDARD, "id").attributes == {
        "a": attribute
    }


@pytest.mark.parametrize(
    "data_type", ["string", "Text", "String.", "Numbers", "", "String." + "x" * 249]
)
def test_other_data_types_are_invalid(data_type: str) -> None:
    with pytest.raises(InvalidParameter):
        prepare(draft(attributes={"a": text("1", data_type)}), STANDARD, "id")


def test_an_empty_string_attribute_is_invalid_with_aws_text() -> None:
    with pytest.raises(InvalidParameter) as caught:
        prepare(draft(attributes={"X": text("")}), STANDARD, "id")
    assert caught.value.reason == (
        "Message (user) attribute 'X' must contain a non-empty value of type 'String'."
    )


def test_a_binary_attribute_needs_a_binary_value() -> None:
    with pytest.raises(InvalidParameter):
        prepare(draft(attributes={"b": text("x", "Binary")}), STANDARD, "id")


@pytest.mark.parametrize("value", ["12", "-1.5", "1e10", "+.5"])
def test_number_attributes_must_parse(value: str) -> None:
    number = text(value, "Number")
    assert prepare(draft(attributes={"n": number}), STANDARD, "id").attributes == {"n": number}


@pytest.mark.parametrize("value", ["twelve", "1.2.3", "--1"])
def test_number_attributes_that_do_not_parse_are_invalid(value: str) -> None:
    with pytest.raises(InvalidParameter):
        prepare(draft(attributes={"n": text(value, "Number")}), STANDARD, "id")


def test_a_data_type_of_255_characters_passes_and_256_fails_with_aws_text() -> None:
    prepare(draft(attributes={"a": text("1", "String." + "x" * 248)}), STANDARD, "id")
    with pytest.raises(InvalidParameter) as caught:
        prepare(draft(attributes={"a": text("1", "String." + "x" * 249)}), STANDARD, "id")
    assert caught.value.reason == (
        "Length of message attribute 'a' type must be less than 256 bytes."
    )


def test_a_string_attribute_with_forbidden_characters_is_an_invalid_parameter() -> None:
    # AWS answers InvalidParameterValue here, InvalidMessageContents only for the body.
    with pytest.raises(InvalidParameter) as caught:
        prepare(draft(attributes={"s": text("a\x08b")}), STANDARD, "id")
    assert "'#x8'" in caught.value.reason


def test_delay_defaults_to_the_queue_and_is_bounded_0_to_900() -> None:
    assert prepare(draft(), QueueConfig(delay_seconds=7), "id").delay == 7
    assert prepare(draft(delay=900), STANDARD, "id").delay == 900
    assert prepare(draft(delay=0), QueueConfig(delay_seconds=7), "id").delay == 0
    for bad in (901, -1):
        with pytest.raises(InvalidParameter) as caught:
            prepare(draft(delay=bad), STANDARD, "id")
        assert caught.value.parameter == "DelaySeconds"


def test_standard_queue_accepts_a_group_id_as_a_fair_queue_tenant() -> None:
    assert prepare(draft(group_id="tenant-1"), STANDARD, "id").group_id == "tenant-1"


def test_standard_queue_takes_a_deduplication_id_as_a_live_key() -> None:
    # A hopper extension: AWS rejects MessageDeduplicationId on standard queues.
    assert prepare(draft(deduplication_id="d"), STANDARD, "id").deduplication_id == "d"


def test_standard_queue_checks_a_live_key_as_a_deduplication_id() -> None:
    for bad in ("", "a" * 129, "é"):
        with pytest.raises(InvalidParameter) as caught:
            prepare(draft(deduplication_id=bad), STANDARD, "id")
        assert caught.value.parameter == "MessageDeduplicationId"


def test_fifo_needs_a_group_id() -> None:
    with pytest.raises(MissingParameter) as caught:
        prepare(draft(deduplication_id="d"), FIFO, "id")
    assert caught.value.parameter == "MessageGroupId"


def test_fifo_rejects_a_per_message_delay_with_aws_text() -> None:
    with pytest.raises(InvalidParameter) as caught:
        prepare(draft(group_id="g", deduplication_id="d", delay=2), FIFO, "id")
    assert (caught.value.parameter, caught.value.value, caught.value.reason) == (
        "DelaySeconds",
        "2",
        "The request include parameter that is not valid for this queue type.",
    )


def test_fifo_uses_the_queue_delay() -> None:
    config = QueueConfig(fifo=True, delay_seconds=5)
    assert prepare(draft(group_id="g", deduplication_id="d"), config, "id").delay == 5


def test_fifo_without_dedup_id_or_content_based_dedup_is_invalid() -> None:
    with pytest.raises(InvalidParameter) as caught:
        prepare(draft(group_id="g"), FIFO, "id")
    assert "ContentBasedDeduplication" in caught.value.reason


def test_fifo_content_based_dedup_id_is_the_sha256_of_the_body() -> None:
    message = prepare(draft("body", group_id="g"), FIFO_CONTENT, "id")
    assert message.deduplication_id == hashlib.sha256(b"body").hexdigest()


def test_fifo_explicit_dedup_id_wins_over_content() -> None:
    message = prepare(draft(group_id="g", deduplication_id="mine"), FIFO_CONTENT, "id")
    assert message.deduplication_id == "mine"


@pytest.mark.parametrize("group", ["", "x" * 129, "tab\there", "\u00e9"])
def test_group_ids_are_1_to_128_alphanumerics_and_punctuation(group: str) -> None:
    with pytest.raises(InvalidParameter):
        prepare(draft(group_id=group, deduplication_id="d"), FIFO, "id")


def test_a_fifo_batch_with_an_entry_without_dedup_id_fails_whole_without_content_dedup() -> None:
    entries = [draft(group_id="g", deduplication_id="d"), draft(group_id="g")]
    with pytest.raises(InvalidParameter) as caught:
        check_batch(entries, FIFO)
    assert caught.value.reason == (
        "The queue should either have ContentBasedDeduplication enabled or "
        "MessageDeduplicationId provided explicitly"
    )
    check_batch(entries, FIFO_CONTENT)
