"""RedrivePolicy and RedriveAllowPolicy as SQS spells them: read from a client's
attribute text (and refused as AWS refuses them), and RedrivePolicy written back."""

from __future__ import annotations

import json
from typing import Any

from hopper.core import limits
from hopper.core.model import DeadLetterRule
from hopper.wire.context import RequestContext
from hopper.wire.errors import SqsError, invalid_parameter_value
from hopper.wire.queue_urls import parse_queue_arn, queue_arn
from hopper.wire.validate import parse_integer


def json_document(text: str) -> Any:
    """The JSON value of a policy text, or None when it is not JSON, or nested too deep
    for the parser (RecursionError, ~1,000 levels: no policy nests so deep)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def parse_redrive_policy(text: str, home: str | None = None) -> DeadLetterRule | None:
    """RedrivePolicy's JSON `{"deadLetterTargetArn": ..., "maxReceiveCount": ...}`; an
    empty text removes the policy (as on AWS). `home` is the server's region, for the
    queue the target ARN names (regions.py)."""
    if text == "":
        return None
    policy = json_document(text)
    if not isinstance(policy, dict):
        raise redrive_error(text, "Redrive policy is not a valid JSON map.")
    for member in ("deadLetterTargetArn", "maxReceiveCount"):
        if member not in policy:
            raise redrive_error(
                text, f"Redrive policy does not contain mandatory attribute: {member}."
            )
    arn = policy["deadLetterTargetArn"]
    target = parse_queue_arn(arn, home) if isinstance(arn, str) else None
    if target is None:
        raise redrive_error(text, "Invalid value for deadLetterTargetArn.")
    return DeadLetterRule(target, _max_receive_count(text, policy["maxReceiveCount"]))


def _max_receive_count(text: str, value: Any) -> int:
    low, high = limits.MIN_MAX_RECEIVE_COUNT, limits.MAX_MAX_RECEIVE_COUNT
    count: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        count = value
    elif isinstance(value, str):
        count = parse_integer(value)
    if count is None or not low <= count <= high:
        raise redrive_error(
            text,
            f"Invalid value for maxReceiveCount: {value}, valid values are from {low} to "
            f"{high} both inclusive.",
        )
    return count


def redrive_error(text: str, reason: str) -> SqsError:
    """How AWS refuses a RedrivePolicy: an invalid value of the parameter, quoted."""
    return invalid_parameter_value("RedrivePolicy", text, reason)


_REDRIVE_PERMISSIONS = ("allowAll", "denyAll", "byQueue")


def check_redrive_allow_policy(text: str) -> str:
    """RedriveAllowPolicy's JSON `{"redrivePermission": allowAll|denyAll|byQueue,
    "sourceQueueArns": [...]}` (the ARNs with byQueue only, 1 to 10 of them); stored as
    sent. An empty text removes the policy."""
    if text == "":
        return text
    policy = json_document(text)
    unsupported = (
        "Amazon SQS can't create the redrive allow policy, as it's in an unsupported format."
    )
    if not isinstance(policy, dict) or policy.get("redrivePermission") not in _REDRIVE_PERMISSIONS:
        raise _policy_error(text, unsupported)
    arns = policy.get("sourceQueueArns")
    if policy["redrivePermission"] != "byQueue":
        if arns is not None:
            raise _policy_error(text, unsupported)
        return text
    if not isinstance(arns, list) or not arns or not all(
        isinstance(arn, str) and parse_queue_arn(arn) is not None for arn in arns
    ):
        raise _policy_error(text, unsupported)
    if len(arns) > limits.MAX_REDRIVE_ALLOW_SOURCES:
        raise _policy_error(
            text,
            "The maximum number of source queue ARNs you can specify is "
            f"{limits.MAX_REDRIVE_ALLOW_SOURCES}.",
        )
    return text


def _policy_error(text: str, reason: str) -> SqsError:
    return invalid_parameter_value("RedriveAllowPolicy", text, reason)


def redrive_policy_text(ctx: RequestContext, rule: DeadLetterRule) -> str:
    """RedrivePolicy as AWS returns it: compact JSON, deadLetterTargetArn first and
    maxReceiveCount as a number."""
    policy = {
        "deadLetterTargetArn": queue_arn(ctx, rule.target),
        "maxReceiveCount": rule.max_receive_count,
    }
    return json.dumps(policy, separators=(",", ":"))
