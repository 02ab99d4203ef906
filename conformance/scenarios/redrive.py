"""Dead-letter queues: RedrivePolicy moves a message after maxReceiveCount receives;
ListDeadLetterSourceQueues names the sources."""

from __future__ import annotations

import json

from conformance.registry import scenario
from conformance.target import Target


def _dead_letter_pair(t: Target, max_receives: int = 1) -> tuple[str, str]:
    dead = t.create_queue("dlq")
    arn = t.call("GetQueueAttributes", QueueUrl=dead, AttributeNames=["QueueArn"])
    target = arn["response"]["Attributes"]["QueueArn"]
    policy = json.dumps({"deadLetterTargetArn": target, "maxReceiveCount": max_receives})
    source = t.create_queue("source", RedrivePolicy=policy)
    return source, dead


@scenario
def a_message_received_max_receive_count_times_moves_to_the_dead_letter_queue(
    t: Target,
) -> list[dict]:
    source, dead = _dead_letter_pair(t, max_receives=1)
    t.call("SendMessage", QueueUrl=source, MessageBody="doomed")
    t.call("ReceiveMessage", QueueUrl=source, VisibilityTimeout=0)
    t.call("ReceiveMessage", QueueUrl=source, VisibilityTimeout=0)
    t.call("ReceiveMessage", QueueUrl=dead, MessageSystemAttributeNames=[
        "ApproximateReceiveCount", "DeadLetterQueueSourceArn"])
    return t.answers


@scenario
def get_queue_attributes_gives_the_redrive_policy(t: Target) -> list[dict]:
    source, _ = _dead_letter_pair(t, max_receives=3)
    t.call("GetQueueAttributes", QueueUrl=source, AttributeNames=["RedrivePolicy"])
    return t.answers


@scenario
def list_dead_letter_source_queues_names_the_sources(t: Target) -> list[dict]:
    _, dead = _dead_letter_pair(t)
    t.call("ListDeadLetterSourceQueues", QueueUrl=dead)
    return t.answers


@scenario
def a_redrive_policy_with_bad_values_is_invalid_parameter_value(t: Target) -> list[dict]:
    dead = t.create_queue("dlq")
    arn = t.call("GetQueueAttributes", QueueUrl=dead, AttributeNames=["QueueArn"])
    target = arn["response"]["Attributes"]["QueueArn"]
    for policy in ({"deadLetterTargetArn": target, "maxReceiveCount": 0},
                   {"deadLetterTargetArn": target},
                   {"deadLetterTargetArn": target.replace("-dlq", "-nowhere"),
                    "maxReceiveCount": 1}):
        t.call("CreateQueue", QueueName=t.queue_name("source"),
               Attributes={"RedrivePolicy": json.dumps(policy)})
    t.call("CreateQueue", QueueName=t.queue_name("source2"),
           Attributes={"RedrivePolicy": "not json"})
    return t.answers
