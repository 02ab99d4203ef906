"""Dead-letter actions: ListDeadLetterSourceQueues, and the message move tasks
(StartMessageMoveTask, CancelMessageMoveTask, ListMessageMoveTasks).

A task handle is what AWS hands out: base64 of a JSON object naming the task and its
source queue's ARN, so CancelMessageMoveTask can tell an unknown source from an
unknown task.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any

from hopper.core.errors import ResourceNotFound
from hopper.core.model import MoveTask, MoveTaskStatus, QueueKey
from hopper.core.service import QueueService
from hopper.wire import validate
from hopper.wire.context import RequestContext
from hopper.wire.errors import SqsError, invalid_parameter_value
from hopper.wire.queue_urls import (
    account_of,
    addressed_queue,
    parse_queue_arn,
    queue_arn,
    queue_url,
)

_TASK_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")


async def list_dead_letter_source_queues(
    service: QueueService, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    page = await service.list_dead_letter_sources(
        addressed_queue(ctx, params),
        max_results=validate.as_int(params, "MaxResults"),
        next_token=validate.as_str(params, "NextToken"),
    )
    # queueUrls is a required member: present even when empty.
    result: dict[str, Any] = {"queueUrls": [queue_url(ctx, key) for key in page.keys]}
    if page.next_token is not None:
        result["NextToken"] = page.next_token
    return result


def _queue_arn(ctx: RequestContext, params: dict[str, Any], name: str) -> QueueKey:
    arn = validate.required_str(params, name)
    key = parse_queue_arn(arn, ctx.home)
    if key is None:
        raise invalid_parameter_value(name, arn, f"{name} must be an SQS queue ARN.")
    if account_of(ctx, key) != ctx.account:
        # Another account's queue does not exist for this caller (tenants are separate).
        raise ResourceNotFound(name)
    return key


async def start_message_move_task(
    service: QueueService, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    source = _queue_arn(ctx, params, "SourceArn")
    destination = None
    if params.get("DestinationArn") is not None:
        destination = _queue_arn(ctx, params, "DestinationArn")
    rate = validate.as_int(params, "MaxNumberOfMessagesPerSecond")
    task = await service.start_move_task(source, destination, rate)
    return {"TaskHandle": task_handle(ctx, task)}


async def cancel_message_move_task(
    service: QueueService, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    handle = validate.required_str(params, "TaskHandle")
    task_id, source = read_task_handle(handle, ctx.home)
    if account_of(ctx, source) != ctx.account:
        # Another account's queue does not exist for this caller: as AWS, the source is
        # what is missing ("Task does not exist." is for an existing source).
        raise ResourceNotFound("SourceArn")
    task = await service.cancel_move_task(task_id, source)
    return {"ApproximateNumberOfMessagesMoved": task.moved}


async def list_message_move_tasks(
    service: QueueService, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    source = _queue_arn(ctx, params, "SourceArn")
    tasks = await service.list_move_tasks(source, validate.as_int(params, "MaxResults"))
    return {"Results": [_task_result(ctx, task) for task in tasks]}


def _task_result(ctx: RequestContext, task: MoveTask) -> dict[str, Any]:
    """One ListMessageMoveTasks entry, as AWS shapes it: the handle only while the task
    runs, the destination and rate only when they were given."""
    result: dict[str, Any] = {
        "Status": task.status.value,
        "SourceArn": queue_arn(ctx, task.source),
        "ApproximateNumberOfMessagesMoved": task.moved,
        "ApproximateNumberOfMessagesToMove": task.to_move,
        "StartedTimestamp": int(task.started_at * 1000),
    }
    if task.status is MoveTaskStatus.RUNNING:
        result["TaskHandle"] = task_handle(ctx, task)
    if task.destination is not None:
        result["DestinationArn"] = queue_arn(ctx, task.destination)
    if task.max_per_second is not None:
        result["MaxNumberOfMessagesPerSecond"] = task.max_per_second
    if task.failure_reason is not None:
        result["FailureReason"] = task.failure_reason
    return result


def task_handle(ctx: RequestContext, task: MoveTask) -> str:
    document = {"taskId": task.id, "sourceArn": queue_arn(ctx, task.source)}
    return base64.b64encode(json.dumps(document, separators=(",", ":")).encode()).decode()


def read_task_handle(handle: str, home: str | None = None) -> tuple[str, QueueKey]:
    """The task id and source queue a handle names. A handle hopper did not issue is
    InvalidParameterValue, with AWS's text."""
    try:
        document = json.loads(base64.b64decode(handle.encode("ascii"), validate=True))
    except (binascii.Error, UnicodeError, ValueError, RecursionError):
        document = None
    task_id = document.get("taskId") if isinstance(document, dict) else None
    arn = document.get("sourceArn") if isinstance(document, dict) else None
    source = parse_queue_arn(arn, home) if isinstance(arn, str) else None
    # The id goes to the store: only text hopper could have issued (PostgreSQL refuses
    # NUL), as the handle's own ARN must name a queue (parse_queue_arn).
    if not isinstance(task_id, str) or not _TASK_ID.fullmatch(task_id) or source is None:
        raise SqsError("InvalidParameterValue", "Value for parameter TaskHandle is invalid.")
    return task_id, source
