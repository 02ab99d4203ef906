"""AddPermission and RemovePermission: parameters checked as AWS checks them; the core
does not store permissions yet, so both answer UnsupportedOperation for now."""

from __future__ import annotations

from typing import Any

from hopper.core.service import QueueService
from hopper.wire import validate
from hopper.wire.context import RequestContext
from hopper.wire.errors import SqsError
from hopper.wire.queue_urls import addressed_queue


def _not_yet(action: str) -> SqsError:
    return SqsError("UnsupportedOperation", f"hopper does not support {action} yet.")


async def add_permission(
    service: QueueService, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    key = addressed_queue(ctx, params)
    validate.required_str(params, "Label")
    validate.required(params, "AWSAccountIds")
    validate.required(params, "Actions")
    validate.as_str_list(params, "AWSAccountIds")
    validate.as_str_list(params, "Actions")
    await service.get_queue(key)
    raise _not_yet("AddPermission")


async def remove_permission(
    service: QueueService, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    key = addressed_queue(ctx, params)
    validate.required_str(params, "Label")
    await service.get_queue(key)
    raise _not_yet("RemovePermission")
