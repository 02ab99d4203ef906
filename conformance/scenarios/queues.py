"""Queues: create (idempotent or not), look up, list, delete."""

from __future__ import annotations

from conformance.registry import scenario
from conformance.target import Target


@scenario
def create_queue_returns_its_url(t: Target) -> list[dict]:
    t.call("CreateQueue", QueueName=t.queue_name())
    return t.answers


@scenario
def create_queue_again_with_the_same_attributes_returns_the_same_url(t: Target) -> list[dict]:
    for _ in range(2):
        t.call("CreateQueue", QueueName=t.queue_name(), Attributes={"DelaySeconds": "3"})
    t.call("CreateQueue", QueueName=t.queue_name())  # no attributes given: nothing differs
    return t.answers


@scenario
def create_queue_again_with_a_different_attribute_is_queue_already_exists(t: Target) -> list[dict]:
    t.call("CreateQueue", QueueName=t.queue_name(), Attributes={"DelaySeconds": "3"})
    t.call("CreateQueue", QueueName=t.queue_name(), Attributes={"DelaySeconds": "4"})
    return t.answers


@scenario
def create_queue_with_an_invalid_name_is_invalid_parameter_value(t: Target) -> list[dict]:
    t.call("CreateQueue", QueueName="has space")
    t.call("CreateQueue", QueueName="x" * 81)
    t.call("CreateQueue", QueueName="dotted.name")
    t.call("CreateQueue", QueueName="x" * 80)  # exactly the limit is accepted
    return t.answers


@scenario
def create_queue_with_an_unknown_attribute_is_invalid_attribute_name(t: Target) -> list[dict]:
    t.call("CreateQueue", QueueName=t.queue_name(), Attributes={"Colour": "blue"})
    return t.answers


@scenario
def create_queue_with_an_out_of_range_attribute_is_invalid_attribute_value(t: Target) -> list[dict]:
    tries = [("VisibilityTimeout", "43201"), ("DelaySeconds", "901"),
             ("MessageRetentionPeriod", "59"), ("MaximumMessageSize", "1023"),
             ("ReceiveMessageWaitTimeSeconds", "21"), ("DelaySeconds", "soon")]
    for number, (name, value) in enumerate(tries):
        # a queue of its own per value: a lax server's success must not spoil the next try
        t.call("CreateQueue", QueueName=t.queue_name(f"a{number}"), Attributes={name: value})
    return t.answers


@scenario
def get_queue_url_finds_a_queue_and_names_a_missing_one(t: Target) -> list[dict]:
    t.create_queue()
    t.call("GetQueueUrl", QueueName=t.queue_name())
    t.call("GetQueueUrl", QueueName=t.queue_name("missing"))
    return t.answers


@scenario
def list_queues_filters_by_prefix(t: Target) -> list[dict]:
    for suffix in ("a", "b", "c"):
        t.create_queue(suffix)
    t.call("ListQueues", QueueNamePrefix=t.queue_name(""))
    t.call("ListQueues", QueueNamePrefix=t.queue_name("b"))
    t.call("ListQueues", QueueNamePrefix=t.queue_name("nothing"))
    return t.answers


@scenario
def list_queues_pages_with_max_results_and_next_token(t: Target) -> list[dict]:
    for suffix in ("a", "b", "c"):
        t.create_queue(suffix)
    first = t.call("ListQueues", QueueNamePrefix=t.queue_name(""), MaxResults=2)
    token = first.get("response", {}).get("NextToken")
    if token:
        t.call("ListQueues", QueueNamePrefix=t.queue_name(""), MaxResults=2, NextToken=token)
    t.call("ListQueues", QueueNamePrefix=t.queue_name(""), MaxResults=3)
    return t.answers


@scenario
def list_queues_with_max_results_out_of_range_is_invalid_parameter_value(t: Target) -> list[dict]:
    t.call("ListQueues", QueueNamePrefix=t.queue_name(""), MaxResults=0)
    t.call("ListQueues", QueueNamePrefix=t.queue_name(""), MaxResults=1001)
    return t.answers


@scenario
def delete_queue_removes_it_and_a_second_delete_is_non_existent_queue(t: Target) -> list[dict]:
    url = t.create_queue()
    t.call("DeleteQueue", QueueUrl=url)
    t.call("GetQueueUrl", QueueName=t.queue_name())
    t.call("DeleteQueue", QueueUrl=url)
    t.call("SendMessage", QueueUrl=url, MessageBody="into the void")
    return t.answers
