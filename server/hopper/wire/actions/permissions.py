"""AddPermission and RemovePermission: they maintain the queue's `Policy` document, shaped
as AWS shapes it (recorded and returned by GetQueueAttributes; not enforced)."""

from __future__ import annotations

import re
from typing import Any

from hopper.core.service import QueueService
from hopper.wire import validate
from hopper.wire.context import RequestContext
from hopper.wire.errors import SqsError, invalid_parameter_value, missing_parameter
from hopper.wire.queue_urls import addressed_queue, queue_arn

# The actions a permission may grant (AWS refuses the owner-only ones).
GRANTABLE = frozenset(
    {
        "*",
        "SendMessage",
        "ReceiveMessage",
        "DeleteMessage",
        "ChangeMessageVisibility",
        "GetQueueAttributes",
        "GetQueueUrl",
        "ListDeadLetterSourceQueues",
        "PurgeQueue",
        "ListQueueTags",
        "StartMessageMoveTask",
        "CancelMessageMoveTask",
        "ListMessageMoveTasks",
    }
)
MAX_ACTIONS = 7
_LABEL = re.compile(r"[\w-]{1,80}", re.ASCII)


async def add_permission(
    service: QueueService, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    key = addressed_queue(ctx, params)
    label = _label(params)
    actions = _non_empty_list(params, "Actions")
    accounts = validate.as_str_list(params, "AWSAccountIds")
    if not accounts:
        # AWS's answer to no principal (moto and other emulators copy it).
        raise invalid_parameter_value("PrincipalId", "[]", "Unable to verify.")
    if len(actions) > MAX_ACTIONS:
        raise SqsError(
            "OverLimit", f"{len(actions)} Actions were found, maximum allowed is {MAX_ACTIONS}."
        )
    for action in actions:
        if action not in GRANTABLE:
            raise invalid_parameter_value(
                "ActionName",
                f"SQS:{action}",
                "Only the queue owner is allowed to invoke this action.",
            )
    arn = queue_arn(ctx, key)
    statement = {
        "Sid": label,
        "Effect": "Allow",
        "Principal": {"AWS": _one_or_list([f"arn:aws:iam::{a}:root" for a in accounts])},
        "Action": _one_or_list([f"SQS:{action}" for action in actions]),
        "Resource": arn,
    }
    await service.add_permission(key, label, statement, f"{arn}/SQSDefaultPolicy")
    return {}


async def remove_permission(
    service: QueueService, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    key = addressed_queue(ctx, params)
    await service.remove_permission(key, _label(params))
    return {}


def _label(params: dict[str, Any]) -> str:
    label = validate.required_str(params, "Label")
    if _LABEL.fullmatch(label) is None:
        raise invalid_parameter_value(
            "Label",
            label,
            "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in "
            "length",
        )
    return label


def _non_empty_list(params: dict[str, Any], name: str) -> list[str]:
    values = validate.as_str_list(params, name)
    if not values:
        raise missing_parameter(name)
    return values


def _one_or_list(values: list[str]) -> str | list[str]:
    # AWS writes a single principal or action as a string, several as a list.
    return values[0] if len(values) == 1 else values
