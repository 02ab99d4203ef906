"""Bounds through boto3 against a live server: the Hopper.MaximumQueueDepth attribute,
OverLimit on send, the 12-hour visibility limit, and a server started with
`--visibility-floor` telling clients in the `x-hopper-visibility-floor` header."""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from botocore.exceptions import ClientError

from hopper.settings import SettingsError, load

from .conftest import STORES, sqs_client, store_options
from .processes import start_hopper

FLOOR = 60
FLOOR_HEADER = "x-hopper-visibility-floor"
DEPTH = "Hopper.MaximumQueueDepth"


def unique(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


def _headers(response: dict) -> dict[str, str]:
    return response["ResponseMetadata"]["HTTPHeaders"]


# --- the depth ceiling and the 12-hour limit, on the session's server -------------------


def test_the_maximum_queue_depth_is_read_by_name_and_never_with_all(sqs):
    url = sqs.create_queue(QueueName=unique("deep"), Attributes={DEPTH: "5"})["QueueUrl"]
    named = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=[DEPTH])["Attributes"]
    assert named == {DEPTH: "5"}
    everything = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert DEPTH not in everything
    sqs.set_queue_attributes(QueueUrl=url, Attributes={DEPTH: "0"})
    assert "Attributes" not in sqs.get_queue_attributes(QueueUrl=url, AttributeNames=[DEPTH])


@pytest.mark.parametrize("text", ["-1", "many", "1.5", "2147483648"])
def test_a_maximum_queue_depth_that_is_not_a_count_is_an_invalid_attribute_value(sqs, text):
    with pytest.raises(ClientError) as raised:
        sqs.create_queue(QueueName=unique("bad"), Attributes={DEPTH: text})
    assert raised.value.response["Error"]["Code"] == "InvalidAttributeValue"


def test_a_send_to_a_full_queue_answers_over_limit_with_403(sqs):
    url = sqs.create_queue(QueueName=unique("full"), Attributes={DEPTH: "1"})["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="first")
    with pytest.raises(ClientError) as raised:
        sqs.send_message(QueueUrl=url, MessageBody="second")
    assert raised.value.response["Error"]["Code"] == "OverLimit"
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403


def test_a_batch_to_a_nearly_full_queue_fails_the_entries_that_do_not_fit(sqs):
    url = sqs.create_queue(QueueName=unique("nearly"), Attributes={DEPTH: "2"})["QueueUrl"]
    entries = [{"Id": str(i), "MessageBody": f"m{i}"} for i in range(3)]
    answer = sqs.send_message_batch(QueueUrl=url, Entries=entries)
    assert [entry["Id"] for entry in answer["Successful"]] == ["0", "1"]
    [failed] = answer["Failed"]
    assert (failed["Id"], failed["Code"], failed["SenderFault"]) == ("2", "OverLimit", True)


def test_a_lease_cannot_reach_beyond_12_hours_after_its_receive(sqs):
    # Time has passed since the receive, so 43,200 more seconds is over the total: AWS
    # answers exactly this (aws/aws-sdk-net#794).
    url = sqs.create_queue(QueueName=unique("long"))["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="work")
    [message] = sqs.receive_message(QueueUrl=url)["Messages"]
    with pytest.raises(ClientError) as raised:
        sqs.change_message_visibility(
            QueueUrl=url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=43_200
        )
    error = raised.value.response["Error"]
    assert error["Code"] == "InvalidParameterValue"
    assert error["Message"] == (
        "Value 43200 for parameter VisibilityTimeout is invalid. Reason: Total "
        "VisibilityTimeout for the message is beyond the limit [43200 seconds]"
    )


def test_a_server_without_a_floor_sends_no_floor_header(sqs):
    url = sqs.create_queue(QueueName=unique("nofloor"))["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="work")
    answer = sqs.receive_message(QueueUrl=url, VisibilityTimeout=1)
    assert FLOOR_HEADER not in _headers(answer)


# --- a server with a visibility floor ---------------------------------------------------


@pytest.fixture(scope="module", params=STORES)
def floored(request: pytest.FixtureRequest) -> Iterator[object]:
    """A boto3 client of a server started with `--visibility-floor 60`, on each store."""
    with tempfile.TemporaryDirectory() as scratch, store_options(request.param) as options:
        server = start_hopper(
            *options,
            "--relaxed-timing",
            "--visibility-floor",
            str(FLOOR),
            log=Path(scratch) / "hopper.log",
        )
        try:
            yield sqs_client(server.url)
        finally:
            code = server.stop()
        assert code == 0, f"hopper exited with {code}:\n{server.output()}"


def _queue_with_one_message(client, **attributes: str) -> str:
    url = client.create_queue(QueueName=unique("floor"), Attributes=attributes)["QueueUrl"]
    client.send_message(QueueUrl=url, MessageBody="work")
    return url


def test_a_receive_shorter_than_the_floor_is_raised_and_says_so(floored):
    url = _queue_with_one_message(floored)
    answer = floored.receive_message(QueueUrl=url, VisibilityTimeout=1)
    assert len(answer["Messages"]) == 1
    assert _headers(answer)[FLOOR_HEADER] == str(FLOOR)
    queue = floored.get_queue_attributes(
        QueueUrl=url, AttributeNames=["ApproximateNumberOfMessagesNotVisible"]
    )
    assert queue["Attributes"]["ApproximateNumberOfMessagesNotVisible"] == "1"


def test_a_queue_default_below_the_floor_is_raised_when_received(floored):
    url = _queue_with_one_message(floored, VisibilityTimeout="5")
    answer = floored.receive_message(QueueUrl=url)
    assert _headers(answer)[FLOOR_HEADER] == str(FLOOR)


def test_a_receive_at_or_above_the_floor_has_no_floor_header(floored):
    url = _queue_with_one_message(floored)
    answer = floored.receive_message(QueueUrl=url, VisibilityTimeout=FLOOR)
    assert FLOOR_HEADER not in _headers(answer)


def test_a_visibility_change_below_the_floor_is_raised_and_says_so(floored):
    url = _queue_with_one_message(floored)
    [message] = floored.receive_message(QueueUrl=url, VisibilityTimeout=120)["Messages"]
    answer = floored.change_message_visibility(
        QueueUrl=url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
    )
    assert _headers(answer)[FLOOR_HEADER] == str(FLOOR)
    # Released to the floor, not to now: the message is still hidden.
    assert "Messages" not in floored.receive_message(QueueUrl=url)
    batch = floored.change_message_visibility_batch(
        QueueUrl=url,
        Entries=[{"Id": "a", "ReceiptHandle": message["ReceiptHandle"], "VisibilityTimeout": 2}],
    )
    assert [entry["Id"] for entry in batch["Successful"]] == ["a"]
    assert _headers(batch)[FLOOR_HEADER] == str(FLOOR)


# --- the setting -------------------------------------------------------------------------


def test_the_floor_is_off_unless_a_flag_or_the_environment_sets_it():
    assert load({}, {}).visibility_floor is None
    assert load({}, {"HOPPER_VISIBILITY_FLOOR": "60"}).visibility_floor == 60
    assert load({"visibility_floor": 30}, {"HOPPER_VISIBILITY_FLOOR": "60"}).visibility_floor == 30


@pytest.mark.parametrize("text", ["0", "43201", "a minute"])
def test_a_floor_outside_1_to_43200_seconds_is_refused(text):
    with pytest.raises(SettingsError):
        load({}, {"HOPPER_VISIBILITY_FLOOR": text})
