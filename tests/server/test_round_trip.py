"""The whole working day of a queue, against a live server: unchanged boto3 code (JSON
protocol), then the same round trip over the query protocol, then the limits at their
edges (exactly the maximum passes, one more fails) in both protocols."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator

import pytest
from botocore.exceptions import ClientError

from .query_client import QueryClient, flatten, listed, path_of

ONE_MIB = 1_048_576


def unique(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def query(endpoint: str) -> Iterator[QueryClient]:
    with QueryClient(endpoint) as client:
        yield client


def error_code(raised: pytest.ExceptionInfo[ClientError]) -> str:
    return str(raised.value.response["Error"]["Code"])


# --- boto3, JSON protocol -------------------------------------------------------------


def test_boto3_creates_sends_long_polls_changes_visibility_deletes_batches_and_tags(sqs):
    url = sqs.create_queue(QueueName=unique("day"), tags={"team": "blue"})["QueueUrl"]
    assert sqs.list_queue_tags(QueueUrl=url)["Tags"] == {"team": "blue"}

    # A long poll parked on the empty queue returns as soon as a message arrives.
    received: dict[str, object] = {}

    def long_poll() -> None:
        started = time.monotonic()
        received["answer"] = sqs.receive_message(
            QueueUrl=url,
            WaitTimeSeconds=20,
            MessageAttributeNames=["All"],
            MessageSystemAttributeNames=["All"],
        )
        received["waited"] = time.monotonic() - started

    poller = threading.Thread(target=long_poll)
    poller.start()
    sent = sqs.send_message(
        QueueUrl=url,
        MessageBody="hello",
        MessageAttributes={"colour": {"DataType": "String", "StringValue": "blue"}},
    )
    poller.join(timeout=20)
    assert not poller.is_alive()
    assert received["waited"] < 10  # woken by the send, not by the 20 s deadline
    (message,) = received["answer"]["Messages"]  # type: ignore[index]
    assert message["MessageId"] == sent["MessageId"]
    assert message["MD5OfMessageAttributes"] == sent["MD5OfMessageAttributes"]
    assert message["Attributes"]["ApproximateReceiveCount"] == "1"

    # Visibility 0 hands the message straight back, with a newer receipt.
    sqs.change_message_visibility(
        QueueUrl=url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
    )
    (again,) = sqs.receive_message(QueueUrl=url, AttributeNames=["All"])["Messages"]
    assert again["Attributes"]["ApproximateReceiveCount"] == "2"
    sqs.delete_message(QueueUrl=url, ReceiptHandle=again["ReceiptHandle"])

    batch = sqs.send_message_batch(
        QueueUrl=url, Entries=[{"Id": f"e{i}", "MessageBody": f"m{i}"} for i in range(10)]
    )
    assert len(batch["Successful"]) == 10 and "Failed" not in batch
    handles = []
    while len(handles) < 10:
        page = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1)
        handles += [m["ReceiptHandle"] for m in page.get("Messages", [])]
    deleted = sqs.delete_message_batch(
        QueueUrl=url, Entries=[{"Id": f"d{i}", "ReceiptHandle": h} for i, h in enumerate(handles)]
    )
    assert len(deleted["Successful"]) == 10
    counts = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert counts["ApproximateNumberOfMessages"] == "0"
    assert counts["ApproximateNumberOfMessagesNotVisible"] == "0"

    sqs.untag_queue(QueueUrl=url, TagKeys=["team"])
    assert "Tags" not in sqs.list_queue_tags(QueueUrl=url)
    sqs.delete_queue(QueueUrl=url)
    with pytest.raises(sqs.exceptions.QueueDoesNotExist):
        sqs.get_queue_url(QueueName=url.rsplit("/", 1)[1])


def test_boto3_message_of_exactly_the_maximum_size_passes_and_one_byte_more_fails(sqs):
    url = sqs.create_queue(QueueName=unique("size"))["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="x" * ONE_MIB)
    with pytest.raises(ClientError) as raised:
        sqs.send_message(QueueUrl=url, MessageBody="x" * (ONE_MIB + 1))
    assert error_code(raised) == "InvalidParameterValue"


def test_boto3_batch_of_ten_passes_and_eleven_is_too_many_entries(sqs):
    url = sqs.create_queue(QueueName=unique("batch"))["QueueUrl"]
    entries = [{"Id": f"e{i}", "MessageBody": "m"} for i in range(11)]
    assert len(sqs.send_message_batch(QueueUrl=url, Entries=entries[:10])["Successful"]) == 10
    with pytest.raises(ClientError) as raised:
        sqs.send_message_batch(QueueUrl=url, Entries=entries)
    assert error_code(raised) == "AWS.SimpleQueueService.TooManyEntriesInBatchRequest"
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_boto3_receive_of_ten_passes_and_eleven_is_an_invalid_value(sqs):
    url = sqs.create_queue(QueueName=unique("max"))["QueueUrl"]
    assert "Messages" not in sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)
    with pytest.raises(ClientError) as raised:
        sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=11)
    assert error_code(raised) == "InvalidParameterValue"


def test_boto3_superseded_receipt_is_refused_and_the_newer_one_deletes(sqs):
    url = sqs.create_queue(QueueName=unique("fence"))["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="job")
    first = sqs.receive_message(QueueUrl=url, VisibilityTimeout=0)["Messages"][0]
    second = sqs.receive_message(QueueUrl=url, MessageSystemAttributeNames=["FencingToken"])[
        "Messages"
    ][0]
    assert "FencingToken" in second["Attributes"]
    with pytest.raises(ClientError) as raised:
        sqs.delete_message(QueueUrl=url, ReceiptHandle=first["ReceiptHandle"])
    assert error_code(raised) == "ReceiptHandleIsInvalid"
    sqs.delete_message(QueueUrl=url, ReceiptHandle=second["ReceiptHandle"])


# --- the query protocol ---------------------------------------------------------------


def test_query_protocol_round_trip_on_the_queue_url_path(query):
    created = query.call(
        "CreateQueue",
        {"QueueName": unique("query"), **flatten("Attribute", {"VisibilityTimeout": 30})},
    )
    assert created.status == 200, created.text
    url = created.result["QueueUrl"]
    path = path_of(url)

    sent = query.call(
        "SendMessage",
        {
            "MessageBody": "hello",
            **flatten("MessageAttribute", {"n": {"DataType": "Number", "StringValue": "7"}}),
        },
        path=path,
    )
    assert sent.status == 200, sent.text
    batch = query.call(
        "SendMessageBatch",
        flatten("SendMessageBatchRequestEntry", [{"Id": "a", "MessageBody": "m"}]),
        path=path,
    )
    assert len(listed(batch.result["SendMessageBatchResultEntry"])) == 1

    got = query.call(
        "ReceiveMessage",
        {
            "MaxNumberOfMessages": "10",
            "WaitTimeSeconds": "1",
            **flatten("MessageAttributeName", ["All"]),
        },
        method="GET",
        path=path,
    )
    messages = listed(got.result["Message"])
    assert {m["Body"] for m in messages} == {"hello", "m"}
    first = next(m for m in messages if m["Body"] == "hello")
    assert first["MD5OfMessageAttributes"] == sent.result["MD5OfMessageAttributes"]

    changed = query.call(
        "ChangeMessageVisibility",
        {"ReceiptHandle": first["ReceiptHandle"], "VisibilityTimeout": "60"},
        path=path,
    )
    assert changed.status == 200, changed.text
    deleted = query.call(
        "DeleteMessageBatch",
        flatten(
            "DeleteMessageBatchRequestEntry",
            [{"Id": f"d{i}", "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(messages)],
        ),
        path=path,
    )
    assert len(listed(deleted.result["DeleteMessageBatchResultEntry"])) == 2
    assert query.call("TagQueue", flatten("Tag", {"k": "v"}), path=path).status == 200
    tags = query.call("ListQueueTags", {}, path=path).result
    assert listed(tags["Tag"]) == [{"Key": "k", "Value": "v"}]
    assert query.call("DeleteQueue", {}, path=path).status == 200


def test_query_protocol_unknown_queue_is_the_prefixed_code_with_sender_type(query):
    answer = query.call("GetQueueUrl", {"QueueName": unique("missing")})
    assert answer.status == 400
    assert answer.error["Code"] == "AWS.SimpleQueueService.NonExistentQueue"
    assert answer.error["Type"] == "Sender"
    assert answer.request_id


def test_query_protocol_limits_at_their_edges(query):
    url = query.call("CreateQueue", {"QueueName": unique("edges")}).result["QueueUrl"]
    path = path_of(url)
    ok = query.call("SendMessage", {"MessageBody": "x" * ONE_MIB}, path=path)
    assert ok.status == 200, ok.text[:200]
    too_big = query.call("SendMessage", {"MessageBody": "x" * (ONE_MIB + 1)}, path=path)
    assert (too_big.status, too_big.error["Code"]) == (400, "InvalidParameterValue")

    entries = [{"Id": f"e{i}", "MessageBody": "m"} for i in range(11)]
    ten = query.call(
        "SendMessageBatch", flatten("SendMessageBatchRequestEntry", entries[:10]), path=path
    )
    assert len(listed(ten.result["SendMessageBatchResultEntry"])) == 10
    eleven = query.call(
        "SendMessageBatch", flatten("SendMessageBatchRequestEntry", entries), path=path
    )
    assert eleven.status == 400
    assert eleven.error["Code"] == "AWS.SimpleQueueService.TooManyEntriesInBatchRequest"

    eleven_asked = query.call("ReceiveMessage", {"MaxNumberOfMessages": "11"}, path=path)
    assert (eleven_asked.status, eleven_asked.error["Code"]) == (400, "InvalidParameterValue")
    garbage = query.call("DeleteMessage", {"ReceiptHandle": "garbage"}, path=path)
    assert (garbage.status, garbage.error["Code"]) == (400, "ReceiptHandleIsInvalid")
    missing = query.call("SendMessage", {}, path=path)
    assert (missing.status, missing.error["Code"]) == (400, "MissingParameter")
