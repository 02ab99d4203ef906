"""Receipt handles: delete and change visibility with current, expired, superseded,
deleted and garbage receipts."""

from __future__ import annotations

from conformance.registry import scenario
from conformance.target import Target


def _sent_and_received(t: Target, url: str, visibility: int = 30) -> str:
    t.call("SendMessage", QueueUrl=url, MessageBody="leased")
    return t.receipts(t.call("ReceiveMessage", QueueUrl=url, VisibilityTimeout=visibility))[0]


@scenario
def delete_message_with_its_receipt_removes_it(t: Target) -> list[dict]:
    url = t.create_queue()
    receipt = _sent_and_received(t, url, visibility=0)
    t.call("DeleteMessage", QueueUrl=url, ReceiptHandle=receipt)
    t.call("ReceiveMessage", QueueUrl=url)
    return t.answers


@scenario
def delete_message_twice_with_the_same_receipt_succeeds(t: Target) -> list[dict]:
    url = t.create_queue()
    receipt = _sent_and_received(t, url)
    t.call("DeleteMessage", QueueUrl=url, ReceiptHandle=receipt)
    t.call("DeleteMessage", QueueUrl=url, ReceiptHandle=receipt)
    return t.answers


@scenario
def delete_message_with_an_expired_receipt_still_deletes(t: Target) -> list[dict]:
    url = t.create_queue()
    receipt = _sent_and_received(t, url, visibility=0)  # expired at once, not re-received
    t.call("DeleteMessage", QueueUrl=url, ReceiptHandle=receipt)
    t.call("ReceiveMessage", QueueUrl=url)
    return t.answers


@scenario
def delete_message_with_a_superseded_receipt(t: Target) -> list[dict]:
    url = t.create_queue()
    first = _sent_and_received(t, url, visibility=0)
    t.call("ReceiveMessage", QueueUrl=url, VisibilityTimeout=30)
    t.call("DeleteMessage", QueueUrl=url, ReceiptHandle=first)
    t.call("GetQueueAttributes", QueueUrl=url,
           AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"])
    return t.answers


@scenario
def delete_message_with_a_garbage_receipt_is_receipt_handle_is_invalid(t: Target) -> list[dict]:
    url = t.create_queue()
    t.call("DeleteMessage", QueueUrl=url, ReceiptHandle="garbage")
    return t.answers


@scenario
def change_message_visibility_to_zero_makes_the_message_visible(t: Target) -> list[dict]:
    url = t.create_queue()
    receipt = _sent_and_received(t, url)
    t.call("ReceiveMessage", QueueUrl=url)
    t.call("ChangeMessageVisibility", QueueUrl=url, ReceiptHandle=receipt, VisibilityTimeout=0)
    t.call("ReceiveMessage", QueueUrl=url, MessageSystemAttributeNames=["ApproximateReceiveCount"])
    return t.answers


@scenario
def change_message_visibility_out_of_range_is_invalid_parameter_value(t: Target) -> list[dict]:
    url = t.create_queue()
    receipt = _sent_and_received(t, url)
    t.call("ChangeMessageVisibility", QueueUrl=url, ReceiptHandle=receipt,
           VisibilityTimeout=43201)
    t.call("ChangeMessageVisibility", QueueUrl=url, ReceiptHandle=receipt, VisibilityTimeout=-1)
    return t.answers


@scenario
def change_message_visibility_with_a_garbage_receipt_is_receipt_handle_is_invalid(
    t: Target,
) -> list[dict]:
    url = t.create_queue()
    t.call("ChangeMessageVisibility", QueueUrl=url, ReceiptHandle="garbage", VisibilityTimeout=5)
    return t.answers


@scenario
def change_message_visibility_of_a_deleted_message(t: Target) -> list[dict]:
    url = t.create_queue()
    receipt = _sent_and_received(t, url)
    t.call("DeleteMessage", QueueUrl=url, ReceiptHandle=receipt)
    t.call("ChangeMessageVisibility", QueueUrl=url, ReceiptHandle=receipt, VisibilityTimeout=5)
    return t.answers


@scenario
def change_message_visibility_with_a_superseded_receipt(t: Target) -> list[dict]:
    url = t.create_queue()
    first = _sent_and_received(t, url, visibility=0)
    t.call("ReceiveMessage", QueueUrl=url, VisibilityTimeout=30)
    t.call("ChangeMessageVisibility", QueueUrl=url, ReceiptHandle=first, VisibilityTimeout=0)
    return t.answers
