"""Queue attributes: read all or some, change, and the errors of bad names and values."""

from __future__ import annotations

from conformance.registry import scenario
from conformance.target import Target


@scenario
def get_queue_attributes_all_of_a_new_queue_gives_the_defaults(t: Target) -> list[dict]:
    url = t.create_queue()
    t.call("GetQueueAttributes", QueueUrl=url, AttributeNames=["All"])
    return t.answers


@scenario
def get_queue_attributes_gives_only_the_names_asked_for(t: Target) -> list[dict]:
    url = t.create_queue(VisibilityTimeout=45)
    t.call("GetQueueAttributes", QueueUrl=url,
           AttributeNames=["VisibilityTimeout", "QueueArn", "ApproximateNumberOfMessages"])
    t.call("GetQueueAttributes", QueueUrl=url)  # no names: no attributes
    return t.answers


@scenario
def get_queue_attributes_with_an_unknown_name_is_invalid_attribute_name(t: Target) -> list[dict]:
    url = t.create_queue()
    t.call("GetQueueAttributes", QueueUrl=url, AttributeNames=["Colour"])
    return t.answers


@scenario
def set_queue_attributes_changes_what_get_queue_attributes_reads(t: Target) -> list[dict]:
    url = t.create_queue()
    t.call("SetQueueAttributes", QueueUrl=url, Attributes={
        "VisibilityTimeout": "60", "DelaySeconds": "7", "MaximumMessageSize": "2048",
        "MessageRetentionPeriod": "3600", "ReceiveMessageWaitTimeSeconds": "1"})
    t.call("GetQueueAttributes", QueueUrl=url, AttributeNames=[
        "VisibilityTimeout", "DelaySeconds", "MaximumMessageSize", "MessageRetentionPeriod",
        "ReceiveMessageWaitTimeSeconds"])
    return t.answers


@scenario
def set_queue_attributes_with_a_bad_value_is_invalid_attribute_value(t: Target) -> list[dict]:
    url = t.create_queue()
    t.call("SetQueueAttributes", QueueUrl=url, Attributes={"VisibilityTimeout": "43201"})
    t.call("SetQueueAttributes", QueueUrl=url, Attributes={"MaximumMessageSize": "1048577"})
    t.call("SetQueueAttributes", QueueUrl=url, Attributes={"Colour": "blue"})
    t.call("GetQueueAttributes", QueueUrl=url, AttributeNames=["VisibilityTimeout"])
    return t.answers


@scenario
def queue_attributes_count_visible_in_flight_and_delayed_messages(t: Target) -> list[dict]:
    url = t.create_queue()
    for body in ("one", "two"):
        t.call("SendMessage", QueueUrl=url, MessageBody=body)
    t.call("SendMessage", QueueUrl=url, MessageBody="later", DelaySeconds=60)
    t.call("ReceiveMessage", QueueUrl=url, MaxNumberOfMessages=1, VisibilityTimeout=60)
    t.call("GetQueueAttributes", QueueUrl=url, AttributeNames=[
        "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible",
        "ApproximateNumberOfMessagesDelayed"])
    return t.answers


@scenario
def operations_on_a_missing_queue_are_non_existent_queue(t: Target) -> list[dict]:
    real = t.create_queue(record=False)
    t.call("SendMessage", QueueUrl=real, MessageBody="x", record=False)
    # a well-formed receipt, so only the queue is wrong
    receipt = t.receipts(t.call("ReceiveMessage", QueueUrl=real, record=False))[0]
    url = real.replace(t.queue_name(), t.queue_name("missing"))
    t.call("GetQueueAttributes", QueueUrl=url, AttributeNames=["All"])
    t.call("SetQueueAttributes", QueueUrl=url, Attributes={"DelaySeconds": "1"})
    t.call("SendMessage", QueueUrl=url, MessageBody="x")
    t.call("ReceiveMessage", QueueUrl=url)
    t.call("PurgeQueue", QueueUrl=url)
    t.call("DeleteMessage", QueueUrl=url, ReceiptHandle=receipt)
    return t.answers
