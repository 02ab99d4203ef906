"""Dead-letter actions: ListDeadLetterSourceQueues, and the message move tasks
(StartMessageMoveTask, CancelMessageMoveTask, ListMessageMoveTasks), whose parameters
are checked here while the core cannot run move tasks yet (UnsupportedOperation)."""

from __future__ import annotations

from typing import Any

from hopper.core.service import QueueService
from hopper.wire import validate
from hopper.wire.context import RequestContext
from hopper.wire.errors import SqsError, invalid_parameter_value
from hopper.wire.queue_urls import addressed_queue, parse_queue_arn, queue_url


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


def _queue_arn(params: dict[str, Any], name: str) -> None:
    arn = validate.required_str(params, name)
    if parse_queue_arn(arn) is None:
        raise invalid_parameter_value(name, arn, f"{name} must be an SQS queue ARN.")


def _not_yet(action: str) -> SqsError:
    return SqsError("UnsupportedOperation", f"hopper does not support {action} yet.")


async def start_message_move_task(
    service: QueueService, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    _queue_arn(params, "SourceArn")
    if params.get("DestinationArn") is not None:
        _queue_arn(params, "DestinationArn")
    validate.as_int(params, "MaxNumberOfMessagesPerSecond")
    raise _not_yet("StartMessageMoveTask")


async def cancel_message_move_task(
    service: QueueService, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    validate.required_str(params, "TaskHandle")
    raise _not_yet("CancelMessageMoveTask")


async def list_message_move_tasks(
    service: QueueService, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    _queue_arn(params, "SourceArn")
    validate.as_int(params, "MaxResults")
    raise _not_yet("ListMessageMoveTasks")
