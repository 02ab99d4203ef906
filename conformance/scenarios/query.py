"""The query protocol (form-encoded requests, XML answers) for every action family,
and its error shapes (`<Error><Type/><Code/>`)."""

from __future__ import annotations

import json
from typing import Any

from conformance.registry import scenario
from conformance.target import Target, listed

ATTRIBUTES = {
    "colour": {"DataType": "String", "StringValue": "blue"},
    "count": {"DataType": "Number", "StringValue": "42"},
    "blob": {"DataType": "Binary", "BinaryValue": b"\x00\x01\xfe\xff"},
}


def _queue(t: Target, suffix: str = "q", **attributes: Any) -> str:
    params: dict[str, Any] = {"QueueName": t.queue_name(suffix)}
    if attributes:
        params["Attributes"] = {k: str(v) for k, v in attributes.items()}
    answer = t.query("CreateQueue", params)
    return str((answer.get("result") or {}).get("QueueUrl", ""))


@scenario
def query_create_get_list_and_delete_queues(t: Target) -> list[dict]:
    url = _queue(t, DelaySeconds=2)
    _queue(t, DelaySeconds=2)
    _queue(t, DelaySeconds=3)
    t.query("GetQueueUrl", {"QueueName": t.queue_name()})
    t.query("ListQueues", {"QueueNamePrefix": t.queue_name("")})
    t.query("DeleteQueue", {"QueueUrl": url})
    t.query("GetQueueUrl", {"QueueName": t.queue_name()})
    return t.answers


@scenario
def query_get_and_set_queue_attributes(t: Target) -> list[dict]:
    url = _queue(t)
    t.query("SetQueueAttributes", {"QueueUrl": url, "Attributes": {"VisibilityTimeout": "60"}})
    t.query("GetQueueAttributes", {"QueueUrl": url, "AttributeNames": ["All"]})
    t.query("GetQueueAttributes", {"QueueUrl": url, "AttributeNames": ["Colour"]})
    t.query("SetQueueAttributes", {"QueueUrl": url, "Attributes": {"DelaySeconds": "901"}})
    return t.answers


@scenario
def query_send_receive_and_delete_with_attributes(t: Target) -> list[dict]:
    url = _queue(t)
    t.query("SendMessage", {"QueueUrl": url, "MessageBody": "over query",
                            "MessageAttributes": ATTRIBUTES})
    received = t.query("ReceiveMessage", {
        "QueueUrl": url, "MessageAttributeNames": ["All"],
        "AttributeNames": ["ApproximateReceiveCount"]})
    for receipt in t.receipts(received):
        t.query("DeleteMessage", {"QueueUrl": url, "ReceiptHandle": receipt})
    t.query("ReceiveMessage", {"QueueUrl": url})
    return t.answers


@scenario
def query_errors_name_type_and_code(t: Target) -> list[dict]:
    url = _queue(t)
    t.query("GetQueueUrl", {"QueueName": t.queue_name("missing")})
    t.query("SendMessage", {"QueueUrl": url.replace(t.queue_name(), t.queue_name("missing")),
                            "MessageBody": "x"})
    t.query("SendMessage", {"QueueUrl": url, "MessageBody": "x", "DelaySeconds": "901"})
    t.query("SendMessage", {"QueueUrl": url})
    t.query("DeleteMessage", {"QueueUrl": url, "ReceiptHandle": "garbage"})
    t.query("ReceiveMessage", {"QueueUrl": url, "MaxNumberOfMessages": "11"})
    t.query("CreateQueue", {"QueueName": t.queue_name(), "Attributes": {"DelaySeconds": "5"}})
    return t.answers


@scenario
def query_send_message_batch_with_a_failing_entry(t: Target) -> list[dict]:
    url = _queue(t, MaximumMessageSize=1024)
    entries = [{"Id": "ok", "MessageBody": "fine", "MessageAttributes": ATTRIBUTES},
               {"Id": "too-big", "MessageBody": "x" * 1025}]
    t.query("SendMessageBatch", {"QueueUrl": url, "Entries": entries})
    many = [{"Id": f"e{n}", "MessageBody": "x"} for n in range(11)]
    t.query("SendMessageBatch", {"QueueUrl": url, "Entries": many})
    return t.answers


@scenario
def query_delete_and_change_visibility_batches(t: Target) -> list[dict]:
    url = _queue(t)
    t.query("SendMessageBatch", {"QueueUrl": url, "Entries": [
        {"Id": "a", "MessageBody": "a"}, {"Id": "b", "MessageBody": "b"}]})
    received = t.query("ReceiveMessage", {"QueueUrl": url, "MaxNumberOfMessages": "10",
                                          "VisibilityTimeout": "30", "WaitTimeSeconds": "1"})
    receipts = t.receipts(received)
    changes = [{"Id": f"c{n}", "ReceiptHandle": r, "VisibilityTimeout": "0"}
               for n, r in enumerate(receipts)] + [
        {"Id": "bad", "ReceiptHandle": "garbage", "VisibilityTimeout": "0"}]
    t.query("ChangeMessageVisibilityBatch", {"QueueUrl": url, "Entries": changes})
    deletes = [{"Id": f"d{n}", "ReceiptHandle": r} for n, r in enumerate(receipts)] + [
        {"Id": "bad", "ReceiptHandle": "garbage"}]
    t.query("DeleteMessageBatch", {"QueueUrl": url, "Entries": deletes})
    return t.answers


@scenario
def query_change_message_visibility_and_purge(t: Target) -> list[dict]:
    url = _queue(t)
    t.query("SendMessage", {"QueueUrl": url, "MessageBody": "leased"})
    received = t.query("ReceiveMessage", {"QueueUrl": url, "VisibilityTimeout": "30"})
    for receipt in t.receipts(received):
        t.query("ChangeMessageVisibility",
                {"QueueUrl": url, "ReceiptHandle": receipt, "VisibilityTimeout": "0"})
    t.query("PurgeQueue", {"QueueUrl": url})
    t.query("ReceiveMessage", {"QueueUrl": url})
    return t.answers


@scenario
def query_tags(t: Target) -> list[dict]:
    url = _queue(t)
    t.query("TagQueue", {"QueueUrl": url, "Tags": {"team": "core", "cost": "42"}})
    t.query("UntagQueue", {"QueueUrl": url, "TagKeys": ["cost"]})
    t.query("ListQueueTags", {"QueueUrl": url})
    return t.answers


@scenario
def query_actions_on_the_queue_url_path(t: Target) -> list[dict]:
    url = _queue(t)
    path = url.split("//", 1)[-1].split("/", 1)[-1]
    t.query("SendMessage", {"MessageBody": "by path"}, path="/" + path)
    t.query("GetQueueAttributes", {"AttributeNames": ["ApproximateNumberOfMessages"]},
            path="/" + path)
    t.query("ReceiveMessage", {}, path="/" + path, method="GET")
    return t.answers


@scenario
def query_receive_gives_messages_as_a_list(t: Target) -> list[dict]:
    url = _queue(t)
    for body in ("one", "two"):
        t.query("SendMessage", {"QueueUrl": url, "MessageBody": body})
    answer = t.query("ReceiveMessage", {"QueueUrl": url, "MaxNumberOfMessages": "10",
                                        "WaitTimeSeconds": "1"})
    # the element is repeated, one per message, never wrapped in a <Messages> list
    listed((answer.get("result") or {}).get("Message"))
    return t.answers


@scenario
def query_add_and_remove_permission(t: Target) -> list[dict]:
    url = _queue(t)
    t.query("AddPermission", {"QueueUrl": url, "Label": "friend", "AWSAccountIds": [
        "111122223333", "444455556666"], "Actions": ["SendMessage", "DeleteMessage"]})
    t.query("GetQueueAttributes", {"QueueUrl": url, "AttributeNames": ["Policy"]})
    t.query("RemovePermission", {"QueueUrl": url, "Label": "friend"})
    t.query("RemovePermission", {"QueueUrl": url, "Label": "friend"})
    return t.answers


@scenario
def query_dead_letter_sources_and_message_move_tasks(t: Target) -> list[dict]:
    dead = _queue(t, "dlq")
    arn = t.query("GetQueueAttributes", {"QueueUrl": dead, "AttributeNames": ["QueueArn"]})
    named = listed((arn.get("result") or {}).get("Attribute"))
    dead_arn = next(str(a["Value"]) for a in named if a.get("Name") == "QueueArn")
    policy = json.dumps({"deadLetterTargetArn": dead_arn, "maxReceiveCount": 1})
    _queue(t, "source", RedrivePolicy=policy)
    t.query("ListDeadLetterSourceQueues", {"QueueUrl": dead})
    t.query("StartMessageMoveTask", {"SourceArn": dead_arn, "MaxNumberOfMessagesPerSecond": "5"})
    t.query("ListMessageMoveTasks", {"SourceArn": dead_arn, "MaxResults": "10"})
    t.query("CancelMessageMoveTask", {"TaskHandle": "garbage"})
    return t.answers
