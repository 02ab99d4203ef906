"""Message move tasks: StartMessageMoveTask, ListMessageMoveTasks, CancelMessageMoveTask
(moving dead letters back to their source queue)."""

from __future__ import annotations

import json

from conformance.registry import scenario
from conformance.target import Target


def _dead_lettered(t: Target) -> tuple[str, str, str]:
    """A source queue, its dead-letter queue holding one message, and that queue's ARN."""
    dead = t.create_queue("dlq", record=False)
    arn = t.call("GetQueueAttributes", QueueUrl=dead, AttributeNames=["QueueArn"],
                 record=False)["response"]["Attributes"]["QueueArn"]
    policy = json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 1})
    source = t.create_queue("source", record=False, RedrivePolicy=policy)
    t.call("SendMessage", QueueUrl=source, MessageBody="redriven", record=False)
    for _ in range(2):  # the second receive moves it
        t.call("ReceiveMessage", QueueUrl=source, VisibilityTimeout=0, record=False)
    return source, dead, arn


@scenario
def start_message_move_task_moves_dead_letters_back_to_their_source(t: Target) -> list[dict]:
    source, dead, arn = _dead_lettered(t)
    t.call("StartMessageMoveTask", SourceArn=arn)
    t.call("ReceiveMessage", QueueUrl=source, WaitTimeSeconds=5,
           MessageSystemAttributeNames=["ApproximateReceiveCount"])
    t.call("ListMessageMoveTasks", SourceArn=arn)
    return t.answers


@scenario
def start_message_move_task_from_a_queue_that_is_no_dead_letter_queue_is_rejected(
    t: Target,
) -> list[dict]:
    url = t.create_queue()
    arn = t.call("GetQueueAttributes", QueueUrl=url, AttributeNames=["QueueArn"],
                 record=False)["response"]["Attributes"]["QueueArn"]
    t.call("StartMessageMoveTask", SourceArn=arn)
    t.call("StartMessageMoveTask", SourceArn=arn.replace(t.queue_name(), t.queue_name("none")))
    return t.answers


@scenario
def message_move_task_rates_out_of_range_are_invalid_parameter_value(t: Target) -> list[dict]:
    _, _, arn = _dead_lettered(t)
    t.call("StartMessageMoveTask", SourceArn=arn, MaxNumberOfMessagesPerSecond=0)
    t.call("StartMessageMoveTask", SourceArn=arn, MaxNumberOfMessagesPerSecond=501)
    return t.answers


@scenario
def cancel_message_move_task_with_an_unknown_handle_is_rejected(t: Target) -> list[dict]:
    t.call("CancelMessageMoveTask", TaskHandle="garbage")
    return t.answers


@scenario
def list_message_move_tasks_of_a_queue_without_tasks_is_empty(t: Target) -> list[dict]:
    _, _, arn = _dead_lettered(t)
    t.call("ListMessageMoveTasks", SourceArn=arn)
    t.call("ListMessageMoveTasks", SourceArn=arn, MaxResults=11)
    return t.answers
