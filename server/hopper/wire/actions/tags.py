"""Tag actions: TagQueue, UntagQueue, ListQueueTags."""

from __future__ import annotations

from typing import Any

from hopper.core.service import QueueService
from hopper.wire import validate
from hopper.wire.context import RequestContext
from hopper.wire.queue_urls import addressed_queue


async def tag_queue(
    service: QueueService, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    key = addressed_queue(ctx, params)
    # Absent or empty, the core's rule answers (MissingParameter, as AWS).
    await service.tag_queue(key, validate.as_str_map(params, "Tags"))
    return {}


async def untag_queue(
    service: QueueService, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    key = addressed_queue(ctx, params)
    # Absent or empty, the core's rule answers (InvalidParameterValue, as AWS).
    await service.untag_queue(key, validate.as_str_list(params, "TagKeys"))
    return {}


async def list_queue_tags(
    service: QueueService, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    record = await service.get_queue(addressed_queue(ctx, params))
    # AWS leaves Tags out for a queue without tags.
    return {"Tags": dict(record.tags)} if record.tags else {}
