"""Live deduplication and fair-queue tenants on standard queues, through boto3 against
a live server on each store: a MessageDeduplicationId (AWS rejects it on standard
queues; hopper takes it as a live key) collapses sends onto the live message and the
`x-hopper-duplicate` headers say so; MessageGroupId comes back as a system attribute."""

from __future__ import annotations

import uuid
from typing import Any

DUPLICATE = "x-hopper-duplicate"
DUPLICATE_ENTRIES = "x-hopper-duplicate-entries"


def new_queue(sqs) -> str:
    url: str = sqs.create_queue(QueueName=f"live-{uuid.uuid4().hex[:8]}")["QueueUrl"]
    return url


def headers(response: dict[str, Any]) -> dict[str, str]:
    found: dict[str, str] = response["ResponseMetadata"]["HTTPHeaders"]
    return found


def test_a_repeated_key_names_the_live_message_until_it_is_deleted(sqs) -> None:
    url = new_queue(sqs)
    first = sqs.send_message(QueueUrl=url, MessageBody="one", MessageDeduplicationId="job-1")
    again = sqs.send_message(QueueUrl=url, MessageBody="two", MessageDeduplicationId="job-1")
    assert headers(first)[DUPLICATE] == "false"
    assert headers(again)[DUPLICATE] == "true"
    assert again["MessageId"] == first["MessageId"]

    [message] = sqs.receive_message(
        QueueUrl=url, MaxNumberOfMessages=10, MessageSystemAttributeNames=["All"]
    )["Messages"]
    assert message["Body"] == "one"
    assert message["Attributes"]["MessageDeduplicationId"] == "job-1"
    sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])

    after = sqs.send_message(QueueUrl=url, MessageBody="three", MessageDeduplicationId="job-1")
    assert headers(after)[DUPLICATE] == "false"
    assert after["MessageId"] != first["MessageId"]


def test_a_batch_names_its_collapsed_entries_in_a_header(sqs) -> None:
    url = new_queue(sqs)
    held = sqs.send_message(QueueUrl=url, MessageBody="held", MessageDeduplicationId="k")
    response = sqs.send_message_batch(
        QueueUrl=url,
        Entries=[
            {"Id": "a", "MessageBody": "x", "MessageDeduplicationId": "k"},
            {"Id": "b", "MessageBody": "y", "MessageDeduplicationId": "other"},
            {"Id": "c", "MessageBody": "z"},
        ],
    )
    assert headers(response)[DUPLICATE_ENTRIES] == "a"
    ids = {entry["Id"]: entry["MessageId"] for entry in response["Successful"]}
    assert ids["a"] == held["MessageId"]


def test_a_group_id_on_a_standard_queue_comes_back_as_a_system_attribute(sqs) -> None:
    url = new_queue(sqs)
    sqs.send_message(QueueUrl=url, MessageBody="x", MessageGroupId="tenant-7")
    response = sqs.receive_message(QueueUrl=url, MessageSystemAttributeNames=["MessageGroupId"])
    [message] = response["Messages"]
    assert message["Attributes"] == {"MessageGroupId": "tenant-7"}
