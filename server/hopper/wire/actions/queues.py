"""Queue actions: CreateQueue, GetQueueUrl, ListQueues, DeleteQueue,
GetQueueAttributes, SetQueueAttributes, PurgeQueue."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hopper.core.errors import InvalidAttributeValue
from hopper.core.model import QueueKey
from hopper.core.service import QueueService
from hopper.wire import queue_attributes, redrive_policies, validate
from hopper.wire.context import RequestContext
from hopper.wire.queue_urls import (
    account_of,
    addressed_queue,
    could_name_queue,
    no_such_queue,
    queue_url,
)


async def create_queue(
    service: QueueService, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    name = validate.required_str(params, "QueueName")
    given = validate.as_str_map(params, "Attributes")
    settings = queue_attributes.settings_from(given, ctx.home)
    tags = validate.as_str_map(params, "tags")
    with _redrive_policy_refused(given):
        _check_own_dead_letter(ctx, settings)
        record = await service.create_queue(QueueKey(ctx.owner, name), settings, tags)
    return {"QueueUrl": queue_url(ctx, record.key)}


async def get_queue_url(
    service: QueueService, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    name = validate.required_str(params, "QueueName")
    owner = validate.as_str(params, "QueueOwnerAWSAccountId", default=ctx.account)
    if owner != ctx.account or not could_name_queue(name):
        # hopper serves one account: another's queues do not exist here.
        raise no_such_queue()
    record = await service.get_queue(QueueKey(ctx.owner, name))
    return {"QueueUrl": queue_url(ctx, record.key)}


async def list_queues(
    service: QueueService, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    page = await service.list_queues(
        ctx.owner,
        prefix=validate.as_str(params, "QueueNamePrefix", default="") or "",
        max_results=validate.as_int(params, "MaxResults"),
        next_token=validate.as_str(params, "NextToken"),
    )
    result: dict[str, Any] = {}
    # AWS leaves QueueUrls out when no queue matches.
    if page.keys:
        result["QueueUrls"] = [queue_url(ctx, key) for key in page.keys]
    if page.next_token is not None:
        result["NextToken"] = page.next_token
    return result


async def delete_queue(
    service: QueueService, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    await service.delete_queue(addressed_queue(ctx, params))
    return {}


async def get_queue_attributes(
    service: QueueService, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    key = addressed_queue(ctx, params)
    requested = validate.as_str_list(params, "AttributeNames")
    names = queue_attributes.check_queue_attribute_names(requested)
    record = await service.get_queue(key)
    stats = await service.queue_stats(key) if queue_attributes.needs_stats(names) else None
    values = queue_attributes.queue_attributes(ctx, record, stats, names)
    if queue_attributes.needs_dead_letter_depth(names):
        depth = await service.dead_letter_depth(key)
        values.update(queue_attributes.operator_attributes(None, depth, 0.0, names))
    values.update(queue_attributes.operator_attributes(stats, None, service.clock.time(), names))
    return {"Attributes": values} if values else {}


async def set_queue_attributes(
    service: QueueService, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    key = addressed_queue(ctx, params)
    validate.required(params, "Attributes")
    given = validate.as_str_map(params, "Attributes")
    await service.get_queue(key)  # a missing queue answers before its attributes
    settings = queue_attributes.settings_from(given, ctx.home)
    with _redrive_policy_refused(given):
        _check_own_dead_letter(ctx, settings)
        await service.set_queue_attributes(key, settings)
    return {}


def _check_own_dead_letter(ctx: RequestContext, settings: dict[str, Any]) -> None:
    """Another account's queue does not exist for this caller, so it cannot be its
    dead-letter queue either (AWS, too, keeps a dead-letter queue in its sources'
    account)."""
    rule = settings.get("dead_letter")
    if rule is not None and account_of(ctx, rule.target) != ctx.account:
        raise InvalidAttributeValue("dead_letter", "Dead letter target does not exist.")


@contextmanager
def _redrive_policy_refused(given: dict[str, str]) -> Iterator[None]:
    """The core refuses a dead-letter rule it cannot follow (no such target, another
    queue type, the target's RedriveAllowPolicy); AWS words each refusal as an invalid
    value of RedrivePolicy, quoting the policy."""
    try:
        yield
    except InvalidAttributeValue as error:
        if error.attribute != "dead_letter":
            raise
        raise redrive_policies.redrive_error(given.get("RedrivePolicy", ""), error.reason) from None


async def purge_queue(
    service: QueueService, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    await service.purge(addressed_queue(ctx, params))
    return {}
