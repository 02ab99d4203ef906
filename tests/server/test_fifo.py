"""FIFO queues end to end, through boto3 (JSON protocol) and the query protocol against a
live server on each store: send, receive and delete in group order, explicit and
content-based deduplication, group locks, and ReceiveRequestAttemptId retries."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from .query_client import QueryClient, flatten, listed, path_of


def unique(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}.fifo"


@pytest.fixture
def query(endpoint: str) -> Iterator[QueryClient]:
    with QueryClient(endpoint) as client:
        yield client


def fifo_queue(sqs, **attributes: str) -> str:
    url: str = sqs.create_queue(
        QueueName=unique("fifo"), Attributes={"FifoQueue": "true", **attributes}
    )["QueueUrl"]
    return url


def receive(sqs, url: str, **params: Any) -> list[dict[str, Any]]:
    params.setdefault("MaxNumberOfMessages", 10)
    answer = sqs.receive_message(QueueUrl=url, MessageSystemAttributeNames=["All"], **params)
    messages: list[dict[str, Any]] = answer.get("Messages", [])
    return messages


def bodies(messages: list[dict[str, Any]]) -> list[str]:
    return [m["Body"] for m in messages]


# --- boto3, JSON protocol --------------------------------------------------------------


def test_boto3_sends_receives_and_deletes_each_group_in_order(sqs):
    url = fifo_queue(sqs)
    sent = [
        sqs.send_message(
            QueueUrl=url, MessageBody=f"{g}{n}", MessageGroupId=g, MessageDeduplicationId=f"d{n}"
        )
        for n, g in enumerate("abab")
    ]
    numbers = [int(s["SequenceNumber"]) for s in sent]
    assert numbers == sorted(set(numbers))
    got = receive(sqs, url)
    # Each group's run whole, as AWS serves them (SQS-NOTES 5.11).
    assert bodies(got) == ["a0", "a2", "b1", "b3"]
    in_order = [sent[n]["SequenceNumber"] for n in (0, 2, 1, 3)]
    assert [m["Attributes"]["SequenceNumber"] for m in got] == in_order
    assert [m["Attributes"]["MessageGroupId"] for m in got] == ["a", "a", "b", "b"]
    assert [m["Attributes"]["MessageDeduplicationId"] for m in got] == ["d0", "d2", "d1", "d3"]
    for message in got:
        sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    assert receive(sqs, url) == []


def send_named(sqs, url: str, *names: str) -> None:
    """One message per name `<group>-<message>`, in order; the body is the name."""
    for name in names:
        sqs.send_message(
            QueueUrl=url,
            MessageBody=name,
            MessageGroupId=name.split("-")[0],
            MessageDeduplicationId=name,
        )


def test_boto3_receive_takes_a_groups_whole_run_before_the_next(sqs):
    # Recorded on AWS: sends g1-m1, g2-m1, g1-m2, g1-m3 -> receive(10) =
    # g1-m1, g1-m2, g1-m3, g2-m1.
    url = fifo_queue(sqs)
    send_named(sqs, url, "g1-m1", "g2-m1", "g1-m2", "g1-m3")
    assert bodies(receive(sqs, url)) == ["g1-m1", "g1-m2", "g1-m3", "g2-m1"]


def test_boto3_a_released_head_comes_after_groups_available_before_it(sqs):
    # Recorded on AWS: ChangeMessageVisibility(g1-m1, 0) while g1-m2 is in flight, then
    # receive(3) -> [g2-m1, g1-m1].
    url = fifo_queue(sqs)
    send_named(sqs, url, "g1-m1", "g1-m2", "g2-m1")
    head, _ = receive(sqs, url, MaxNumberOfMessages=2, VisibilityTimeout=60)
    sqs.change_message_visibility(
        QueueUrl=url, ReceiptHandle=head["ReceiptHandle"], VisibilityTimeout=0
    )
    assert bodies(receive(sqs, url, MaxNumberOfMessages=3)) == ["g2-m1", "g1-m1"]


def test_boto3_sequence_numbers_are_20_digit_decimals_increasing_in_a_group(sqs):
    url = fifo_queue(sqs)
    numbers = [
        sqs.send_message(
            QueueUrl=url, MessageBody="x", MessageGroupId="g", MessageDeduplicationId=f"d{n}"
        )["SequenceNumber"]
        for n in range(3)
    ]
    assert all(len(n) == 20 and n.isdigit() for n in numbers)
    assert [int(n) for n in numbers] == sorted({int(n) for n in numbers})
    got = receive(sqs, url)
    assert [m["Attributes"]["SequenceNumber"] for m in got] == numbers


def test_boto3_a_purged_fifo_queue_forgets_its_deduplication_ids(sqs):
    url = fifo_queue(sqs)
    send_named(sqs, url, "g-once")
    sqs.purge_queue(QueueUrl=url)
    send_named(sqs, url, "g-once")
    assert bodies(receive(sqs, url)) == ["g-once"]


def test_boto3_duplicate_sends_are_accepted_and_delivered_once(sqs):
    url = fifo_queue(sqs)
    first = sqs.send_message(
        QueueUrl=url, MessageBody="one", MessageGroupId="g", MessageDeduplicationId="same"
    )
    again = sqs.send_message(
        QueueUrl=url, MessageBody="two", MessageGroupId="g", MessageDeduplicationId="same"
    )
    assert (again["MessageId"], again["SequenceNumber"]) == (
        first["MessageId"],
        first["SequenceNumber"],
    )
    assert again["ResponseMetadata"]["HTTPHeaders"]["x-hopper-duplicate"] == "true"
    [message] = receive(sqs, url)
    assert message["Body"] == "one"
    sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    # Still a duplicate after the original was received and deleted.
    sqs.send_message(
        QueueUrl=url, MessageBody="three", MessageGroupId="g", MessageDeduplicationId="same"
    )
    assert receive(sqs, url) == []


def test_boto3_content_based_deduplication_uses_the_body(sqs):
    url = fifo_queue(sqs, ContentBasedDeduplication="true")
    ids = [
        sqs.send_message(QueueUrl=url, MessageBody=body, MessageGroupId="g")["MessageId"]
        for body in ("same", "same", "other")
    ]
    assert ids[0] == ids[1] != ids[2]
    assert bodies(receive(sqs, url)) == ["same", "other"]


def test_boto3_send_without_deduplication_is_an_invalid_parameter_value(sqs):
    url = fifo_queue(sqs)
    with pytest.raises(ClientError) as caught:
        sqs.send_message(QueueUrl=url, MessageBody="x", MessageGroupId="g")
    assert caught.value.response["Error"]["Code"] == "InvalidParameterValue"
    with pytest.raises(ClientError) as delayed:
        sqs.send_message(
            QueueUrl=url,
            MessageBody="x",
            MessageGroupId="g",
            MessageDeduplicationId="d",
            DelaySeconds=2,
        )
    assert delayed.value.response["Error"]["Message"] == (
        "Value 2 for parameter DelaySeconds is invalid. Reason: The request include "
        "parameter that is not valid for this queue type."
    )


def test_boto3_batch_entry_without_a_group_fails_the_whole_batch(sqs):
    url = fifo_queue(sqs)
    entries = [
        {"Id": "ok", "MessageBody": "x", "MessageGroupId": "g", "MessageDeduplicationId": "1"},
        {"Id": "no-group", "MessageBody": "y", "MessageDeduplicationId": "2"},
    ]
    with pytest.raises(ClientError) as caught:
        sqs.send_message_batch(QueueUrl=url, Entries=entries)
    error = caught.value.response["Error"]
    assert error["Code"] == "InvalidParameterValue"
    assert error["Message"] == "The request must contain the parameter MessageGroupId."
    assert receive(sqs, url) == []


def test_boto3_group_is_locked_while_a_message_is_in_flight(sqs):
    url = fifo_queue(sqs)
    for n in range(2):
        sqs.send_message(
            QueueUrl=url, MessageBody=f"m{n}", MessageGroupId="g", MessageDeduplicationId=f"d{n}"
        )
    sqs.send_message(QueueUrl=url, MessageBody="h", MessageGroupId="h", MessageDeduplicationId="h")
    [head] = receive(sqs, url, MaxNumberOfMessages=1, VisibilityTimeout=60)
    assert head["Body"] == "m0"
    assert bodies(receive(sqs, url)) == ["h"]
    sqs.change_message_visibility(
        QueueUrl=url, ReceiptHandle=head["ReceiptHandle"], VisibilityTimeout=0
    )
    again = receive(sqs, url, VisibilityTimeout=60)
    assert bodies(again) == ["m0", "m1"]
    assert again[0]["Attributes"]["ApproximateReceiveCount"] == "2"


def test_boto3_retried_receive_attempt_returns_the_same_batch(sqs):
    url = fifo_queue(sqs)
    for n, g in enumerate("gh"):
        sqs.send_message(
            QueueUrl=url, MessageBody=f"m{n}", MessageGroupId=g, MessageDeduplicationId=f"d{n}"
        )
    first = receive(sqs, url, ReceiveRequestAttemptId="attempt-1", VisibilityTimeout=60)
    again = receive(sqs, url, ReceiveRequestAttemptId="attempt-1", VisibilityTimeout=60)
    assert [m["ReceiptHandle"] for m in again] == [m["ReceiptHandle"] for m in first]
    assert [m["Attributes"]["ApproximateReceiveCount"] for m in again] == ["1", "1"]
    # Another attempt finds both groups locked.
    assert receive(sqs, url, ReceiveRequestAttemptId="attempt-2") == []
    sqs.delete_message(QueueUrl=url, ReceiptHandle=again[0]["ReceiptHandle"])
    # A message of the attempt was deleted: the retry is a receive like any other.
    assert receive(sqs, url, ReceiveRequestAttemptId="attempt-1") == []
    with pytest.raises(ClientError) as caught:
        receive(sqs, url, ReceiveRequestAttemptId="no spaces allowed")
    assert caught.value.response["Error"]["Code"] == "InvalidParameterValue"


def test_boto3_expired_fifo_receipt_is_an_invalid_parameter_value(sqs):
    url = fifo_queue(sqs)
    sqs.send_message(QueueUrl=url, MessageBody="x", MessageGroupId="g", MessageDeduplicationId="d")
    [message] = receive(sqs, url, VisibilityTimeout=0)
    with pytest.raises(ClientError) as caught:
        sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    error = caught.value.response["Error"]
    assert error["Code"] == "InvalidParameterValue"
    assert error["Message"].endswith("Reason: The receipt handle has expired.")


def test_boto3_fifo_attributes_and_their_rules(sqs):
    url = fifo_queue(
        sqs, DeduplicationScope="messageGroup", FifoThroughputLimit="perMessageGroupId"
    )
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert attributes["FifoQueue"] == "true"
    assert attributes["DeduplicationScope"] == "messageGroup"
    assert attributes["FifoThroughputLimit"] == "perMessageGroupId"
    # Deduplication per group: the same id in two groups is two messages.
    for g in "ab":
        sqs.send_message(QueueUrl=url, MessageBody=g, MessageGroupId=g, MessageDeduplicationId="d")
    assert sorted(bodies(receive(sqs, url))) == ["a", "b"]
    with pytest.raises(ClientError) as combination:
        sqs.set_queue_attributes(QueueUrl=url, Attributes={"DeduplicationScope": "queue"})
    assert combination.value.response["Error"]["Code"] == "InvalidAttributeValue"
    with pytest.raises(ClientError) as changed:
        sqs.set_queue_attributes(QueueUrl=url, Attributes={"FifoQueue": "false"})
    assert changed.value.response["Error"]["Code"] == "InvalidAttributeValue"
    standard = sqs.create_queue(QueueName=unique("plain")[: -len(".fifo")])["QueueUrl"]
    with pytest.raises(ClientError) as unknown:
        sqs.set_queue_attributes(QueueUrl=standard, Attributes={"DeduplicationScope": "queue"})
    assert unknown.value.response["Error"]["Code"] == "InvalidAttributeName"
    with pytest.raises(ClientError) as no_suffix:
        sqs.create_queue(QueueName="no-suffix", Attributes={"FifoQueue": "true"})
    assert no_suffix.value.response["Error"]["Code"] == "InvalidParameterValue"


# --- the query protocol --------------------------------------------------------------------


def query_send(query: QueryClient, path: str, body: str, group: str, dedup: str | None) -> Any:
    params = {"MessageBody": body, "MessageGroupId": group}
    if dedup is not None:
        params["MessageDeduplicationId"] = dedup
    return query.call("SendMessage", params, path=path)


def query_receive(query: QueryClient, path: str, **params: str) -> list[dict[str, Any]]:
    answer = query.call(
        "ReceiveMessage",
        {"MaxNumberOfMessages": "10", **flatten("AttributeName", ["All"]), **params},
        path=path,
    )
    assert answer.status == 200, answer.text
    return listed((answer.result or {}).get("Message"))


def attribute(message: dict[str, Any], name: str) -> str:
    return next(a["Value"] for a in listed(message["Attribute"]) if a["Name"] == name)


def test_query_protocol_fifo_order_deduplication_and_locks(query):
    created = query.call(
        "CreateQueue",
        {
            "QueueName": unique("query"),
            **flatten("Attribute", {"FifoQueue": "true", "ContentBasedDeduplication": "true"}),
        },
    )
    assert created.status == 200, created.text
    path = path_of(created.result["QueueUrl"])
    first = query_send(query, path, "m0", "g", None)
    again = query_send(query, path, "m0", "g", None)
    explicit = query_send(query, path, "m0", "g", "explicit")
    query_send(query, path, "m1", "g", "e1")
    assert first.result["MessageId"] == again.result["MessageId"]
    assert first.result["SequenceNumber"] == again.result["SequenceNumber"]
    assert explicit.result["MessageId"] != first.result["MessageId"]

    [head] = query_receive(query, path, MaxNumberOfMessages="1", VisibilityTimeout="60")
    assert head["Body"] == "m0" and attribute(head, "MessageGroupId") == "g"
    assert query_receive(query, path) == []
    deleted = query.call("DeleteMessage", {"ReceiptHandle": head["ReceiptHandle"]}, path=path)
    assert deleted.status == 200, deleted.text
    rest = query_receive(query, path, ReceiveRequestAttemptId="retry-me")
    assert [m["Body"] for m in rest] == ["m0", "m1"]
    retried = query_receive(query, path, ReceiveRequestAttemptId="retry-me")
    assert [m["ReceiptHandle"] for m in retried] == [m["ReceiptHandle"] for m in rest]

    missing = query.call(
        "SendMessage", {"MessageBody": "x", "MessageDeduplicationId": "d"}, path=path
    )
    assert missing.status == 400
    assert missing.error["Code"] == "MissingParameter"
    delayed = query.call(
        "SendMessage",
        {
            "MessageBody": "x",
            "MessageGroupId": "g",
            "MessageDeduplicationId": "z",
            "DelaySeconds": "5",
        },
        path=path,
    )
    assert delayed.status == 400 and delayed.error["Code"] == "InvalidParameterValue"


def test_query_protocol_expired_fifo_receipt_and_bad_attempt_id(query):
    created = query.call(
        "CreateQueue",
        {"QueueName": unique("expired"), **flatten("Attribute", {"FifoQueue": "true"})},
    )
    path = path_of(created.result["QueueUrl"])
    query_send(query, path, "x", "g", "d")
    [message] = query_receive(query, path, VisibilityTimeout="0")
    expired = query.call("DeleteMessage", {"ReceiptHandle": message["ReceiptHandle"]}, path=path)
    assert expired.status == 400
    assert expired.error["Code"] == "InvalidParameterValue"
    assert expired.error["Message"].endswith("Reason: The receipt handle has expired.")
    bad = query.call("ReceiveMessage", {"ReceiveRequestAttemptId": "x" * 129}, path=path)
    assert bad.status == 400 and bad.error["Code"] == "InvalidParameterValue"


def query_fifo_queue(query: QueryClient, name: str) -> str:
    created = query.call(
        "CreateQueue",
        {"QueueName": unique(name), **flatten("Attribute", {"FifoQueue": "true"})},
    )
    assert created.status == 200, created.text
    return path_of(created.result["QueueUrl"])


def test_query_protocol_receive_order_follows_aws(query):
    # The two recorded AWS examples of the JSON tests above, over the query protocol.
    path = query_fifo_queue(query, "order")
    for name in ("g1-m1", "g2-m1", "g1-m2", "g1-m3"):
        query_send(query, path, name, name.split("-")[0], name)
    assert [m["Body"] for m in query_receive(query, path)] == [
        "g1-m1", "g1-m2", "g1-m3", "g2-m1",
    ]
    path = query_fifo_queue(query, "released")
    for name in ("g1-m1", "g1-m2", "g2-m1"):
        query_send(query, path, name, name.split("-")[0], name)
    head, _ = query_receive(query, path, MaxNumberOfMessages="2", VisibilityTimeout="60")
    changed = query.call(
        "ChangeMessageVisibility",
        {"ReceiptHandle": head["ReceiptHandle"], "VisibilityTimeout": "0"},
        path=path,
    )
    assert changed.status == 200, changed.text
    got = query_receive(query, path, MaxNumberOfMessages="3")
    assert [m["Body"] for m in got] == ["g2-m1", "g1-m1"]


def test_query_protocol_sequence_numbers_and_purge(query):
    path = query_fifo_queue(query, "purge")
    sent = query_send(query, path, "x", "g", "once")
    number = sent.result["SequenceNumber"]
    assert len(number) == 20 and number.isdigit()
    [message] = query_receive(query, path)
    assert attribute(message, "SequenceNumber") == number
    purged = query.call("PurgeQueue", {}, path=path)
    assert purged.status == 200, purged.text
    query_send(query, path, "x", "g", "once")
    assert [m["Body"] for m in query_receive(query, path)] == ["x"]
