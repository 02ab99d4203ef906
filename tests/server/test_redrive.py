"""Dead letters end to end, through boto3 against a live server on each store: a poison
message is dead-lettered after exactly maxReceiveCount receives, a move task brings it
back, a rate-limited task can be cancelled; and permissions shape the queue's Policy."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import pytest
from botocore.exceptions import ClientError

from .query_client import QueryClient

# A move task runs in the server's background; the tests wait for its end by asking
# ListMessageMoveTasks, at most this long.
TASK_DEADLINE = 20.0
POLL_PAUSE = 0.05


def unique(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


def queue_with_arn(sqs, name: str, **attributes: str) -> tuple[str, str]:
    url = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]
    return url, arn["QueueArn"]


def receive(sqs, url: str, **params: Any) -> list[dict[str, Any]]:
    response = sqs.receive_message(
        QueueUrl=url, MaxNumberOfMessages=10, MessageSystemAttributeNames=["All"], **params
    )
    messages: list[dict[str, Any]] = response.get("Messages", [])
    return messages


def latest_task(sqs, source_arn: str) -> dict[str, Any]:
    [task] = sqs.list_message_move_tasks(SourceArn=source_arn)["Results"]
    return task


def finished_task(sqs, source_arn: str) -> dict[str, Any]:
    """The source's latest task once it is no longer RUNNING or CANCELLING."""
    deadline = time.monotonic() + TASK_DEADLINE
    while True:
        task = latest_task(sqs, source_arn)
        if task["Status"] not in ("RUNNING", "CANCELLING"):
            return task
        assert time.monotonic() < deadline, f"the move task did not finish: {task}"
        time.sleep(POLL_PAUSE)  # the next look at the task's status


def test_a_poison_message_is_dead_lettered_then_moved_back_as_a_fresh_message(sqs):
    dlq_url, dlq_arn = queue_with_arn(sqs, unique("dlq"))
    policy = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 3})
    source_url, source_arn = queue_with_arn(sqs, unique("source"), RedrivePolicy=policy)
    sent = sqs.send_message(QueueUrl=source_url, MessageBody="poison")

    # Received exactly maxReceiveCount times (a zero lease makes it visible at once)...
    for count in range(1, 4):
        [message] = receive(sqs, source_url, VisibilityTimeout=0)
        assert message["MessageId"] == sent["MessageId"]
        assert message["Attributes"]["ApproximateReceiveCount"] == str(count)
        assert "DeadLetterQueueSourceArn" not in message["Attributes"]
    # ...then the next receive moves it to the dead-letter queue instead.
    assert receive(sqs, source_url, VisibilityTimeout=0) == []
    [dead] = receive(sqs, dlq_url, VisibilityTimeout=0)
    assert (dead["MessageId"], dead["Body"]) == (sent["MessageId"], "poison")
    # It keeps its count: received "across all queues"; the move was no receive.
    assert dead["Attributes"]["ApproximateReceiveCount"] == "4"
    assert dead["Attributes"]["DeadLetterQueueSourceArn"] == source_arn
    assert sqs.list_dead_letter_source_queues(QueueUrl=dlq_url)["queueUrls"] == [source_url]

    # A move task brings it back to its source.
    handle = sqs.start_message_move_task(SourceArn=dlq_arn)["TaskHandle"]
    task = finished_task(sqs, dlq_arn)
    assert task["Status"] == "COMPLETED"
    assert task["ApproximateNumberOfMessagesMoved"] == 1
    assert task["ApproximateNumberOfMessagesToMove"] == 1
    assert task["SourceArn"] == dlq_arn
    assert "TaskHandle" not in task  # shown only while the task runs
    assert handle
    assert receive(sqs, dlq_url) == []
    [back] = receive(sqs, source_url)
    assert (back["MessageId"], back["Body"]) == (sent["MessageId"], "poison")
    assert back["Attributes"]["ApproximateReceiveCount"] == "1"
    assert "DeadLetterQueueSourceArn" not in back["Attributes"]
    sqs.delete_message(QueueUrl=source_url, ReceiptHandle=back["ReceiptHandle"])


def test_a_rate_limited_move_task_is_cancelled(sqs):
    dlq_url, dlq_arn = queue_with_arn(sqs, unique("dlq"))
    policy = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 1})
    queue_with_arn(sqs, unique("source"), RedrivePolicy=policy)
    destination_url, destination_arn = queue_with_arn(sqs, unique("elsewhere"))
    for n in range(5):
        sqs.send_message(QueueUrl=dlq_url, MessageBody=f"m{n}")

    # One message a second: five messages take seconds, so the cancel finds it running.
    handle = sqs.start_message_move_task(
        SourceArn=dlq_arn, DestinationArn=destination_arn, MaxNumberOfMessagesPerSecond=1
    )["TaskHandle"]
    running = latest_task(sqs, dlq_arn)
    assert running["TaskHandle"] == handle
    assert running["MaxNumberOfMessagesPerSecond"] == 1
    assert running["DestinationArn"] == destination_arn
    cancelled = sqs.cancel_message_move_task(TaskHandle=handle)
    assert cancelled["ApproximateNumberOfMessagesMoved"] <= 1

    task = finished_task(sqs, dlq_arn)
    assert task["Status"] == "CANCELLED"
    moved = task["ApproximateNumberOfMessagesMoved"]
    assert moved <= 2
    counts = ["ApproximateNumberOfMessages"]
    left = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=counts)["Attributes"]
    arrived = sqs.get_queue_attributes(QueueUrl=destination_url, AttributeNames=counts)
    assert int(left["ApproximateNumberOfMessages"]) == 5 - moved
    assert int(arrived["Attributes"]["ApproximateNumberOfMessages"]) == moved
    # The source may start another task now.
    sqs.start_message_move_task(SourceArn=dlq_arn, DestinationArn=destination_arn)
    assert finished_task(sqs, dlq_arn)["Status"] == "COMPLETED"


def test_cancelling_with_a_garbage_handle_is_an_invalid_parameter_value(sqs):
    with pytest.raises(ClientError) as caught:
        sqs.cancel_message_move_task(TaskHandle="garbage")
    assert caught.value.response["Error"]["Code"] == "InvalidParameterValue"


def test_permissions_are_added_to_and_removed_from_the_policy(sqs):
    url, arn = queue_with_arn(sqs, unique("shared"))
    sqs.add_permission(
        QueueUrl=url, Label="workers", AWSAccountIds=["111111111111"], Actions=["SendMessage"]
    )
    sqs.add_permission(
        QueueUrl=url,
        Label="readers",
        AWSAccountIds=["111111111111", "222222222222"],
        Actions=["ReceiveMessage", "DeleteMessage"],
    )
    text = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["Policy"])["Attributes"]
    policy = json.loads(text["Policy"])
    assert policy["Version"] == "2008-10-17"
    assert policy["Id"] == f"{arn}/SQSDefaultPolicy"
    assert policy["Statement"] == [
        {
            "Sid": "workers",
            "Effect": "Allow",
            "Principal": {"AWS": "arn:aws:iam::111111111111:root"},
            "Action": "SQS:SendMessage",
            "Resource": arn,
        },
        {
            "Sid": "readers",
            "Effect": "Allow",
            "Principal": {
                "AWS": ["arn:aws:iam::111111111111:root", "arn:aws:iam::222222222222:root"]
            },
            "Action": ["SQS:ReceiveMessage", "SQS:DeleteMessage"],
            "Resource": arn,
        },
    ]

    sqs.remove_permission(QueueUrl=url, Label="workers")
    text = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["Policy"])["Attributes"]
    assert [s["Sid"] for s in json.loads(text["Policy"])["Statement"]] == ["readers"]
    sqs.remove_permission(QueueUrl=url, Label="readers")
    assert "Attributes" not in sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["Policy"])


def test_a_label_used_twice_is_refused(sqs):
    url, _ = queue_with_arn(sqs, unique("shared"))
    params = {"QueueUrl": url, "Label": "l", "AWSAccountIds": ["1"], "Actions": ["*"]}
    sqs.add_permission(**params)
    with pytest.raises(ClientError) as caught:
        sqs.add_permission(**params)
    assert caught.value.response["Error"]["Code"] == "InvalidParameterValue"


def test_operator_attributes_answer_in_one_call_and_never_for_all(sqs):
    _, dlq_arn = queue_with_arn(sqs, unique("dlq"))
    policy = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 5})
    url, _ = queue_with_arn(sqs, unique("watched"), RedrivePolicy=policy)
    before_send = time.time()
    sqs.send_message(QueueUrl=url, MessageBody="retried")
    for _ in range(2):
        assert len(receive(sqs, url, VisibilityTimeout=0)) == 1
    values = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["Hopper.All"])["Attributes"]
    assert values["Hopper.ApproximateNumberOfRedeliveredMessages"] == "1"
    assert values["Hopper.ApproximateNumberOfRedeliveries"] == "1"
    assert values["Hopper.DeadLetterQueueDepth"] == "0"
    # Sent during this test: whole seconds, no more than the time since (the server's
    # clock is this machine's; a second's slack for rounding).
    age = int(values["Hopper.ApproximateAgeOfOldestVisibleMessage"])
    assert 0 <= age <= time.time() - before_send + 1
    every = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert not [name for name in every if name.startswith("Hopper.")]


def test_move_tasks_and_permissions_answer_in_the_query_protocol(sqs, endpoint):
    dlq_url, dlq_arn = queue_with_arn(sqs, unique("dlq"))
    policy = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 1})
    queue_with_arn(sqs, unique("source"), RedrivePolicy=policy)
    with QueryClient(endpoint) as query:
        started = query.call("StartMessageMoveTask", {"SourceArn": dlq_arn})
        assert started.status == 200, started.text
        assert started.result["TaskHandle"]
        finished_task(sqs, dlq_arn)
        listed = query.call("ListMessageMoveTasks", {"SourceArn": dlq_arn})
        assert listed.status == 200, listed.text
        entry = listed.result["ListMessageMoveTasksResultEntry"]
        assert (entry["Status"], entry["SourceArn"]) == ("COMPLETED", dlq_arn)
        assert entry["ApproximateNumberOfMessagesMoved"] == "0"
        added = query.call(
            "AddPermission",
            {"QueueUrl": dlq_url, "Label": "l", "AWSAccountId.1": "111111111111",
             "ActionName.1": "SendMessage"},
        )
        assert added.status == 200, added.text
        garbage = query.call("CancelMessageMoveTask", {"TaskHandle": "garbage"})
        assert garbage.status == 400
        assert garbage.error is not None and garbage.error["Code"] == "InvalidParameterValue"
    text = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["Policy"])["Attributes"]
    [statement] = json.loads(text["Policy"])["Statement"]
    assert (statement["Sid"], statement["Action"]) == ("l", "SQS:SendMessage")
