"""FIFO queues: group order, deduplication, and the parameters only FIFO queues take."""

from __future__ import annotations

from conformance.registry import scenario
from conformance.target import Target


def _fifo(t: Target, suffix: str = "q", **attributes: object) -> str:
    return t.create_queue(f"{suffix}.fifo", FifoQueue="true", **attributes)


@scenario
def fifo_queue_attributes_of_a_new_queue(t: Target) -> list[dict]:
    url = _fifo(t, ContentBasedDeduplication="true")
    t.call("GetQueueAttributes", QueueUrl=url, AttributeNames=["All"])
    return t.answers


@scenario
def fifo_queue_names_must_end_in_fifo(t: Target) -> list[dict]:
    t.call("CreateQueue", QueueName=t.queue_name(), Attributes={"FifoQueue": "true"})
    t.call("CreateQueue", QueueName=t.queue_name("x.fifo"))
    t.call("CreateQueue", QueueName=t.queue_name("y.fifo"), Attributes={"FifoQueue": "false"})
    return t.answers


@scenario
def fifo_messages_of_a_group_come_in_order(t: Target) -> list[dict]:
    url = _fifo(t)
    for n in range(3):
        t.call("SendMessage", QueueUrl=url, MessageBody=f"m{n}", MessageGroupId="g",
               MessageDeduplicationId=f"d{n}")
    for _ in range(3):
        answer = t.call("ReceiveMessage", QueueUrl=url, MessageSystemAttributeNames=[
            "MessageGroupId", "MessageDeduplicationId", "SequenceNumber"])
        for receipt in t.receipts(answer):
            t.call("DeleteMessage", QueueUrl=url, ReceiptHandle=receipt)
    return t.answers


@scenario
def fifo_group_is_locked_while_a_message_is_in_flight(t: Target) -> list[dict]:
    url = _fifo(t)
    for n in range(2):
        t.call("SendMessage", QueueUrl=url, MessageBody=f"m{n}", MessageGroupId="g",
               MessageDeduplicationId=f"d{n}")
    t.call("ReceiveMessage", QueueUrl=url, MaxNumberOfMessages=1, VisibilityTimeout=30)
    t.call("ReceiveMessage", QueueUrl=url, MaxNumberOfMessages=1)
    return t.answers


@scenario
def fifo_duplicate_sends_are_accepted_but_delivered_once(t: Target) -> list[dict]:
    url = _fifo(t)
    for body in ("first", "second"):
        t.call("SendMessage", QueueUrl=url, MessageBody=body, MessageGroupId="g",
               MessageDeduplicationId="same")
    t.call("ReceiveMessage", QueueUrl=url, MaxNumberOfMessages=10)
    return t.answers


@scenario
def fifo_content_based_deduplication_uses_the_body(t: Target) -> list[dict]:
    url = _fifo(t, ContentBasedDeduplication="true")
    for body in ("same", "same", "other"):
        t.call("SendMessage", QueueUrl=url, MessageBody=body, MessageGroupId="g")
    t.call("GetQueueAttributes", QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])
    return t.answers


@scenario
def fifo_send_without_required_ids_is_rejected(t: Target) -> list[dict]:
    url = _fifo(t)
    t.call("SendMessage", QueueUrl=url, MessageBody="x", MessageDeduplicationId="d")
    t.call("SendMessage", QueueUrl=url, MessageBody="x", MessageGroupId="g")
    return t.answers


@scenario
def fifo_send_with_a_per_message_delay_is_invalid_parameter_value(t: Target) -> list[dict]:
    url = _fifo(t)
    t.call("SendMessage", QueueUrl=url, MessageBody="x", MessageGroupId="g",
           MessageDeduplicationId="d", DelaySeconds=2)
    return t.answers


@scenario
def fifo_send_message_batch_with_group_ids(t: Target) -> list[dict]:
    url = _fifo(t)
    entries = [{"Id": f"e{n}", "MessageBody": f"m{n}", "MessageGroupId": "g",
                "MessageDeduplicationId": f"d{n}"} for n in range(3)]
    entries.append({"Id": "no-group", "MessageBody": "x", "MessageDeduplicationId": "d9"})
    t.call("SendMessageBatch", QueueUrl=url, Entries=entries)
    return t.answers


@scenario
def standard_queue_cannot_become_fifo(t: Target) -> list[dict]:
    url = t.create_queue()
    t.call("SetQueueAttributes", QueueUrl=url, Attributes={"FifoQueue": "true"})
    fifo = _fifo(t)
    t.call("SetQueueAttributes", QueueUrl=fifo, Attributes={"FifoQueue": "false"})
    return t.answers
