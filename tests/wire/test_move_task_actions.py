"""StartMessageMoveTask, CancelMessageMoveTask and ListMessageMoveTasks as the wire answers
them: task handles, the ListMessageMoveTasks entry's shape, and the errors' AWS codes.
(The rules themselves are specified in tests/contract/test_move_tasks.py.)"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from hopper.core.errors import QueueError
from hopper.core.model import MoveTask, MoveTaskStatus, QueueKey
from hopper.core.service import QueueService
from hopper.store.memory import MemoryQueueStore
from hopper.wire.actions import ACTIONS
from hopper.wire.actions.redrive import read_task_handle, task_handle
from hopper.wire.context import RequestContext
from hopper.wire.errors import SqsError, from_core

ACCOUNT = "000000000000"
BASE = "http://localhost:9324"
CTX = RequestContext("json", ACCOUNT, "us-east-1", BASE, None, None, "request-1")


def arn(name: str) -> str:
    return f"arn:aws:sqs:us-east-1:{ACCOUNT}:{name}"


@pytest.fixture
async def service() -> AsyncIterator[QueueService]:
    queue_service = QueueService(MemoryQueueStore(), enforce_timing_rules=False)
    await queue_service.start()
    yield queue_service
    await queue_service.close()


async def call(service: QueueService, action: str, params: dict[str, Any]) -> dict[str, Any]:
    return await ACTIONS[action](service, CTX, params)


async def failure(service: QueueService, action: str, params: dict[str, Any]) -> SqsError:
    try:
        await call(service, action, params)
    except SqsError as error:
        return error
    except QueueError as error:
        return from_core(error)
    pytest.fail(f"{action} succeeded")


async def dead_letter_queue_with(service: QueueService, messages: int) -> None:
    """Queues `dlq` (holding `messages` messages), `source` naming it, and `elsewhere`."""
    await call(service, "CreateQueue", {"QueueName": "dlq"})
    policy = json.dumps({"deadLetterTargetArn": arn("dlq"), "maxReceiveCount": 1})
    source = {"QueueName": "source", "Attributes": {"RedrivePolicy": policy}}
    await call(service, "CreateQueue", source)
    await call(service, "CreateQueue", {"QueueName": "elsewhere"})
    for n in range(messages):
        await call(
            service, "SendMessage", {"QueueUrl": f"{BASE}/{ACCOUNT}/dlq", "MessageBody": f"m{n}"}
        )


def handle_of(document: Any) -> str:
    return base64.b64encode(json.dumps(document).encode()).decode()


# --- task handles -------------------------------------------------------------------------


def test_a_task_handle_names_the_task_and_its_source_queue():
    task = MoveTask(
        id="task-1",
        source=QueueKey(ACCOUNT, "dlq"),
        destination=None,
        max_per_second=None,
        status=MoveTaskStatus.RUNNING,
        started_at=0.0,
        to_move=0,
    )
    handle = task_handle(CTX, task)
    assert json.loads(base64.b64decode(handle)) == {"taskId": "task-1", "sourceArn": arn("dlq")}
    assert read_task_handle(handle) == ("task-1", QueueKey(ACCOUNT, "dlq"))


@pytest.mark.parametrize(
    "handle",
    [
        "garbage",
        "",
        "é",
        base64.b64encode(b"not json").decode(),
        base64.b64encode(b"\xff\xfe").decode(),
        handle_of(["taskId", "sourceArn"]),
        handle_of({"taskId": "t"}),
        handle_of({"sourceArn": arn("dlq")}),
        handle_of({"taskId": 7, "sourceArn": arn("dlq")}),
        handle_of({"taskId": "t", "sourceArn": "not an arn"}),
    ],
    ids=[
        "garbage",
        "empty",
        "not ascii",
        "not json",
        "not utf-8",
        "not an object",
        "no source",
        "no task",
        "task not text",
        "source not an arn",
    ],
)
def test_a_handle_hopper_did_not_issue_is_an_invalid_parameter_value(handle: str):
    with pytest.raises(SqsError) as caught:
        read_task_handle(handle)
    assert (caught.value.name, caught.value.message) == (
        "InvalidParameterValue",
        "Value for parameter TaskHandle is invalid.",
    )


async def test_cancel_with_a_garbage_handle_is_an_invalid_parameter_value(service):
    error = await failure(service, "CancelMessageMoveTask", {"TaskHandle": "garbage"})
    assert error.name == "InvalidParameterValue"


async def test_cancel_without_a_handle_is_missing_the_parameter(service):
    assert (await failure(service, "CancelMessageMoveTask", {})).name == "MissingParameter"


# --- a task's life through the actions -----------------------------------------------------


async def test_a_started_task_is_listed_running_with_its_handle_and_can_be_cancelled(service):
    await dead_letter_queue_with(service, messages=3)
    # One message a second: the task is still running when the cancel arrives.
    started = await call(
        service,
        "StartMessageMoveTask",
        {"SourceArn": arn("dlq"), "DestinationArn": arn("elsewhere"),
         "MaxNumberOfMessagesPerSecond": 1},
    )
    handle = started["TaskHandle"]
    task_id, source = read_task_handle(handle)
    assert source == QueueKey(ACCOUNT, "dlq")
    [entry] = (await call(service, "ListMessageMoveTasks", {"SourceArn": arn("dlq")}))["Results"]
    assert entry["ApproximateNumberOfMessagesMoved"] in (0, 1)
    assert entry == {
        "Status": "RUNNING",
        "TaskHandle": handle,
        "SourceArn": arn("dlq"),
        "DestinationArn": arn("elsewhere"),
        "MaxNumberOfMessagesPerSecond": 1,
        "ApproximateNumberOfMessagesMoved": entry["ApproximateNumberOfMessagesMoved"],
        "ApproximateNumberOfMessagesToMove": 3,
        "StartedTimestamp": entry["StartedTimestamp"],
    }
    assert isinstance(entry["StartedTimestamp"], int)
    cancelled = await call(service, "CancelMessageMoveTask", {"TaskHandle": handle})
    assert cancelled["ApproximateNumberOfMessagesMoved"] in (0, 1)
    [entry] = (await call(service, "ListMessageMoveTasks", {"SourceArn": arn("dlq")}))["Results"]
    assert entry["Status"] in ("CANCELLING", "CANCELLED")
    assert "TaskHandle" not in entry  # the handle is shown only while the task runs
    task = await service.store.get_move_task(task_id)
    assert task is not None and task.status.value == entry["Status"]


async def test_a_finished_task_shows_no_handle_destination_or_rate(service):
    await dead_letter_queue_with(service, messages=0)
    await service.store.create_move_task(
        MoveTask(
            id="done",
            source=QueueKey(ACCOUNT, "dlq"),
            destination=None,
            max_per_second=None,
            status=MoveTaskStatus.FAILED,
            started_at=1_700_000_000.25,
            to_move=4,
            moved=2,
            failure_reason="AWS.SimpleQueueService.NonExistentQueue",
        )
    )
    result = await call(service, "ListMessageMoveTasks", {"SourceArn": arn("dlq")})
    assert result == {
        "Results": [
            {
                "Status": "FAILED",
                "SourceArn": arn("dlq"),
                "ApproximateNumberOfMessagesMoved": 2,
                "ApproximateNumberOfMessagesToMove": 4,
                "StartedTimestamp": 1_700_000_000_250,
                "FailureReason": "AWS.SimpleQueueService.NonExistentQueue",
            }
        ]
    }


async def test_list_reads_max_results_in_query_shape(service):
    await dead_letter_queue_with(service, messages=0)
    result = await call(
        service, "ListMessageMoveTasks", {"SourceArn": arn("dlq"), "MaxResults": "10"}
    )
    assert result == {"Results": []}
    error = await failure(
        service, "ListMessageMoveTasks", {"SourceArn": arn("dlq"), "MaxResults": "11"}
    )
    assert error.name == "InvalidParameterValue"


# --- errors ---------------------------------------------------------------------------------


async def test_a_second_task_for_the_same_source_is_an_invalid_parameter_value(service):
    await dead_letter_queue_with(service, messages=3)
    params = {"SourceArn": arn("dlq"), "DestinationArn": arn("elsewhere"),
              "MaxNumberOfMessagesPerSecond": 1}
    await call(service, "StartMessageMoveTask", params)
    error = await failure(service, "StartMessageMoveTask", params)
    assert error.name == "InvalidParameterValue"
    assert "Only one active task is allowed" in error.message


async def test_a_source_that_is_no_dead_letter_queue_is_an_invalid_parameter_value(service):
    await dead_letter_queue_with(service, messages=0)
    error = await failure(service, "StartMessageMoveTask", {"SourceArn": arn("source")})
    assert (error.name, error.message) == (
        "InvalidParameterValue",
        "Source queue must be configured as a Dead Letter Queue.",
    )


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"SourceArn": arn("missing")},
            "The resource that you specified for the SourceArn parameter doesn't exist.",
        ),
        (
            {"SourceArn": arn("dlq"), "DestinationArn": arn("missing")},
            "The resource that you specified for the DestinationArn parameter doesn't exist.",
        ),
    ],
    ids=["source", "destination"],
)
async def test_an_unknown_queue_is_resource_not_found(service, params, message):
    await dead_letter_queue_with(service, messages=0)
    error = await failure(service, "StartMessageMoveTask", params)
    assert (error.name, error.message) == ("ResourceNotFoundException", message)


@pytest.mark.parametrize("rate", ["0", "501", 0, 501])
async def test_a_rate_outside_1_to_500_is_an_invalid_parameter_value(service, rate):
    await dead_letter_queue_with(service, messages=0)
    error = await failure(
        service,
        "StartMessageMoveTask",
        {"SourceArn": arn("dlq"), "MaxNumberOfMessagesPerSecond": rate},
    )
    assert error.name == "InvalidParameterValue"
    assert "MaxNumberOfMessagesPerSecond" in error.message


async def test_cancelling_an_unknown_task_is_resource_not_found(service):
    await dead_letter_queue_with(service, messages=0)
    handle = handle_of({"taskId": "no-such-task", "sourceArn": arn("dlq")})
    error = await failure(service, "CancelMessageMoveTask", {"TaskHandle": handle})
    assert (error.name, error.message) == ("ResourceNotFoundException", "Task does not exist.")


async def test_cancelling_a_task_of_an_unknown_queue_is_resource_not_found(service):
    handle = handle_of({"taskId": "t", "sourceArn": arn("missing")})
    error = await failure(service, "CancelMessageMoveTask", {"TaskHandle": handle})
    assert error.name == "ResourceNotFoundException"
