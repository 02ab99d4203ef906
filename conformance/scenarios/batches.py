"""Batches: SendMessageBatch, DeleteMessageBatch, ChangeMessageVisibilityBatch — whole
successes, partial failures, and the limits of a batch."""

from __future__ import annotations

from conformance.registry import scenario
from conformance.target import Target


def _entries(count: int, **extra: object) -> list[dict]:
    return [{"Id": f"e{n}", "MessageBody": f"body {n}", **extra} for n in range(count)]


def _received(t: Target, url: str, count: int) -> list[str]:
    t.call("SendMessageBatch", QueueUrl=url, Entries=_entries(count))
    answer = t.call("ReceiveMessage", QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=30,
                    WaitTimeSeconds=1)
    return t.receipts(answer)


@scenario
def send_message_batch_sends_every_entry_with_its_md5s(t: Target) -> list[dict]:
    url = t.create_queue()
    attributes = {"kind": {"DataType": "String", "StringValue": "batched"}}
    entries = _entries(3) + [{"Id": "with-attributes", "MessageBody": "attributed",
                              "MessageAttributes": attributes, "DelaySeconds": 0}]
    t.call("SendMessageBatch", QueueUrl=url, Entries=entries)
    t.call("GetQueueAttributes", QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])
    return t.answers


@scenario
def send_message_batch_with_a_bad_entry_fails_only_that_entry(t: Target) -> list[dict]:
    url = t.create_queue(MaximumMessageSize=1024)
    entries = [
        {"Id": "fits", "MessageBody": "x" * 1024},
        {"Id": "too-big", "MessageBody": "x" * 1025},
        {"Id": "bad-delay", "MessageBody": "x", "DelaySeconds": 901},
        {"Id": "ok", "MessageBody": "y"},
    ]
    t.call("SendMessageBatch", QueueUrl=url, Entries=entries)
    t.call("GetQueueAttributes", QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])
    return t.answers


@scenario
def batch_requests_with_more_than_ten_entries_are_too_many_entries(t: Target) -> list[dict]:
    url = t.create_queue()
    t.call("SendMessageBatch", QueueUrl=url, Entries=_entries(11))
    deletes = [{"Id": f"d{n}", "ReceiptHandle": f"garbage-{n}"} for n in range(11)]
    t.call("DeleteMessageBatch", QueueUrl=url, Entries=deletes)
    changes = [{"Id": f"c{n}", "ReceiptHandle": f"garbage-{n}", "VisibilityTimeout": 1}
               for n in range(11)]
    t.call("ChangeMessageVisibilityBatch", QueueUrl=url, Entries=changes)
    return t.answers


@scenario
def batch_requests_with_ten_entries_are_accepted(t: Target) -> list[dict]:
    url = t.create_queue()
    t.call("SendMessageBatch", QueueUrl=url, Entries=_entries(10))
    return t.answers


@scenario
def empty_batch_requests_are_empty_batch_request(t: Target) -> list[dict]:
    url = t.create_queue()
    for op in ("SendMessageBatch", "DeleteMessageBatch", "ChangeMessageVisibilityBatch"):
        t.call(op, QueueUrl=url, Entries=[])
    return t.answers


@scenario
def batch_entries_with_the_same_id_are_batch_entry_ids_not_distinct(t: Target) -> list[dict]:
    url = t.create_queue()
    twice = [{"Id": "same", "MessageBody": "a"}, {"Id": "same", "MessageBody": "b"}]
    t.call("SendMessageBatch", QueueUrl=url, Entries=twice)
    deletes = [{"Id": "same", "ReceiptHandle": "garbage"}] * 2
    t.call("DeleteMessageBatch", QueueUrl=url, Entries=deletes)
    return t.answers


@scenario
def batch_entry_ids_with_bad_characters_are_invalid_batch_entry_id(t: Target) -> list[dict]:
    url = t.create_queue()
    t.call("SendMessageBatch", QueueUrl=url, Entries=[{"Id": "no spaces!", "MessageBody": "a"}])
    t.call("SendMessageBatch", QueueUrl=url, Entries=[{"Id": "i" * 81, "MessageBody": "a"}])
    t.call("SendMessageBatch", QueueUrl=url, Entries=[{"Id": "i" * 80, "MessageBody": "a"}])
    return t.answers


@scenario
def send_message_batch_over_one_mebibyte_in_total_is_batch_request_too_long(
    t: Target,
) -> list[dict]:
    url = t.create_queue()
    halves = [{"Id": "a", "MessageBody": "x" * 524_288}, {"Id": "b", "MessageBody": "y" * 524_289}]
    t.call("SendMessageBatch", QueueUrl=url, Entries=halves)
    t.call("GetQueueAttributes", QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])
    return t.answers


@scenario
def delete_message_batch_deletes_good_receipts_and_fails_garbage_ones(t: Target) -> list[dict]:
    url = t.create_queue()
    receipts = _received(t, url, 2)
    entries = [{"Id": f"r{n}", "ReceiptHandle": r} for n, r in enumerate(receipts)]
    entries.append({"Id": "garbage", "ReceiptHandle": "garbage"})
    t.call("DeleteMessageBatch", QueueUrl=url, Entries=entries)
    t.call("GetQueueAttributes", QueueUrl=url, AttributeNames=[
        "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"])
    return t.answers


@scenario
def change_message_visibility_batch_changes_good_receipts_and_fails_bad_ones(
    t: Target,
) -> list[dict]:
    url = t.create_queue()
    receipts = _received(t, url, 2)
    entries = [{"Id": f"r{n}", "ReceiptHandle": r, "VisibilityTimeout": 0}
               for n, r in enumerate(receipts)]
    entries.append({"Id": "garbage", "ReceiptHandle": "garbage", "VisibilityTimeout": 0})
    entries.append({"Id": "too-long", "ReceiptHandle": receipts[0], "VisibilityTimeout": 43201})
    t.call("ChangeMessageVisibilityBatch", QueueUrl=url, Entries=entries)
    t.call("GetQueueAttributes", QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])
    return t.answers
