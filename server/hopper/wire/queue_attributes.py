"""Queue attributes as SQS names and spells them.

The queue attribute table joins each settable SQS attribute to its parser and its
range; its `QueueConfig` field comes from attribute_names.py (the attributes the core
only stores and echoes go to `extra`). `settings_from` turns a client's `Attributes`
into the `settings` mapping QueueService.create_queue / set_queue_attributes take;
`queue_attributes` renders GetQueueAttributes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from hopper.core import limits
from hopper.core.model import QueueRecord, QueueStats
from hopper.wire.attribute_names import DISPATCH, FIELD_NAMES, MAXIMUM_QUEUE_DEPTH, RETRY_POLICY
from hopper.wire.context import RequestContext
from hopper.wire.dispatch_targets import dispatch_text, parse_dispatch
from hopper.wire.errors import SqsError
from hopper.wire.queue_urls import queue_arn
from hopper.wire.redrive_policies import (
    check_redrive_allow_policy,
    json_document,
    parse_redrive_policy,
    redrive_policy_text,
)
from hopper.wire.retry_policies import parse_retry_policy, retry_policy_text
from hopper.wire.validate import parse_integer


@dataclass(frozen=True)
class _Setting:
    """One settable attribute: how its text is read. Which attributes a queue of each
    type takes is the core's rule (core/queues.py), with AWS's texts."""

    parse: Callable[[str, str], Any]  # (SQS name, text) -> typed value, or raise


def _invalid(name: str) -> SqsError:
    # AWS's text for a value out of range or of the wrong kind.
    return SqsError("InvalidAttributeValue", f"Invalid value for the parameter {name}.")


def _integer(low: int, high: int) -> Callable[[str, str], int]:
    def parse(name: str, text: str) -> int:
        number = parse_integer(text)
        if number is None or not low <= number <= high:
            raise _invalid(name)
        return number

    return parse


def _seconds(low: int, high: int) -> Callable[[str, str], float]:
    whole = _integer(low, high)
    return lambda name, text: float(whole(name, text))


def _boolean(name: str, text: str) -> bool:
    if text.lower() not in ("true", "false"):
        raise _invalid(name)
    return text.lower() == "true"


def _boolean_text(name: str, text: str) -> str:
    return "true" if _boolean(name, text) else "false"


def _verbatim(name: str, text: str) -> str:
    return text


def _json_text(name: str, text: str) -> str:
    """A policy document: stored as sent, but it must be JSON (an empty text clears)."""
    if text == "":
        return text
    if json_document(text) is None:
        raise _invalid(name)
    return text


def _one_of(*choices: str) -> Callable[[str, str], str]:
    def parse(name: str, text: str) -> str:
        if text not in choices:
            raise _invalid(name)
        return text

    return parse


def _depth(name: str, text: str) -> int | None:
    """Hopper.MaximumQueueDepth: a positive count sets the ceiling; 0 or an empty text
    removes it."""
    if text.strip() == "":
        return None
    return _integer(0, limits.MAX_QUEUE_DEPTH_SETTING)(name, text) or None


_SETTINGS: dict[str, _Setting] = {
    "VisibilityTimeout": _Setting(_seconds(0, limits.MAX_VISIBILITY_TIMEOUT)),
    "MaximumMessageSize": _Setting(
        _integer(limits.MIN_MESSAGE_SIZE_SETTING, limits.MAX_MESSAGE_SIZE)
    ),
    "MessageRetentionPeriod": _Setting(
        _seconds(limits.MIN_RETENTION_SECONDS, limits.MAX_RETENTION_SECONDS)
    ),
    "DelaySeconds": _Setting(_seconds(0, limits.MAX_DELAY_SECONDS)),
    "ReceiveMessageWaitTimeSeconds": _Setting(_seconds(0, limits.MAX_WAIT_TIME_SECONDS)),
    # Read by settings_from itself, which knows the server's region (for the target ARN).
    "RedrivePolicy": _Setting(lambda name, text: parse_redrive_policy(text)),
    "FifoQueue": _Setting(_boolean),
    # The core knows ContentBasedDeduplication is FIFO-only and says so itself.
    "ContentBasedDeduplication": _Setting(_boolean),
    "Policy": _Setting(_json_text),
    "RedriveAllowPolicy": _Setting(lambda name, text: check_redrive_allow_policy(text)),
    "KmsMasterKeyId": _Setting(_verbatim),
    "KmsDataKeyReusePeriodSeconds": _Setting(lambda n, t: str(_integer(60, 86_400)(n, t))),
    "SqsManagedSseEnabled": _Setting(_boolean_text),
    "DeduplicationScope": _Setting(_one_of("messageGroup", "queue")),
    "FifoThroughputLimit": _Setting(_one_of("perQueue", "perMessageGroupId")),
    MAXIMUM_QUEUE_DEPTH: _Setting(_depth),
    RETRY_POLICY: _Setting(parse_retry_policy),
    DISPATCH: _Setting(parse_dispatch),
}

_READ_ONLY = (
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesNotVisible",
    "ApproximateNumberOfMessagesDelayed",
    "CreatedTimestamp",
    "LastModifiedTimestamp",
    "QueueArn",
)

# SQS attribute name -> its QueueConfig field; the others go to `extra`.
_FIELDS = {name: field for field, name in FIELD_NAMES.items()}


def unknown_attribute(name: str) -> SqsError:
    return SqsError("InvalidAttributeName", f"Unknown Attribute {name}.")


# --- setting --------------------------------------------------------------------------


def settings_from(attributes: Mapping[str, str], home: str | None = None) -> dict[str, Any]:
    """The `settings` mapping for QueueService: QueueConfig field -> typed value, and
    `extra` -> {SQS name: text} for the attributes the core only echoes. Read-only and
    unknown names are InvalidAttributeName, bad values InvalidAttributeValue; which
    attributes a queue of each type takes is the core's rule. `home` is the server's
    region, for the queue a RedrivePolicy's ARN names (regions.py)."""
    settings: dict[str, Any] = {}
    extra: dict[str, str] = {}
    for name, text in attributes.items():
        setting = _SETTINGS.get(name)
        if setting is None:
            raise unknown_attribute(name)
        if name == "RedrivePolicy":
            value: Any = parse_redrive_policy(text, home)
        else:
            value = setting.parse(name, text)
        field = _FIELDS.get(name)
        if field is None:
            extra[name] = value
        else:
            settings[field] = value
    _check_encryption(attributes)
    if extra:
        settings["extra"] = extra
    return settings


def _check_encryption(attributes: Mapping[str, str]) -> None:
    """KMS encryption and SQS-managed encryption exclude each other (AWS answers
    InvalidAttributeName). hopper encrypts nothing either way: the values are echoed."""
    kms = attributes.get("KmsMasterKeyId", "") != ""
    sse = attributes.get("SqsManagedSseEnabled", "").lower() == "true"
    if kms and sse:
        raise SqsError(
            "InvalidAttributeName",
            "You can use one type of server-side encryption (SSE) at one time. You can "
            "either enable KMS SSE or SQS SSE.",
        )


# --- getting --------------------------------------------------------------------------

QUEUE_ATTRIBUTE_NAMES = (
    "QueueArn",
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesNotVisible",
    "ApproximateNumberOfMessagesDelayed",
    "CreatedTimestamp",
    "LastModifiedTimestamp",
    "VisibilityTimeout",
    "MaximumMessageSize",
    "MessageRetentionPeriod",
    "DelaySeconds",
    "ReceiveMessageWaitTimeSeconds",
    "RedrivePolicy",
    "Policy",
    "RedriveAllowPolicy",
    "KmsMasterKeyId",
    "KmsDataKeyReusePeriodSeconds",
    "SqsManagedSseEnabled",
    "FifoQueue",
    "ContentBasedDeduplication",
    "DeduplicationScope",
    "FifoThroughputLimit",
)
_FIFO_ATTRIBUTES = frozenset(
    {"FifoQueue", "ContentBasedDeduplication", "DeduplicationScope", "FifoThroughputLimit"}
)
_COUNTS = frozenset(name for name in _READ_ONLY if name.startswith("Approximate"))


# hopper's extension attributes for operators: returned only when asked for by name
# (or all of them by `Hopper.All`), never for `All`, so a vanilla SDK never sees them.
HOPPER_ALL = "Hopper.All"
AGE_OF_OLDEST_MESSAGE = "Hopper.ApproximateAgeOfOldestMessage"
AGE_OF_OLDEST_VISIBLE_MESSAGE = "Hopper.ApproximateAgeOfOldestVisibleMessage"
REDELIVERED_MESSAGES = "Hopper.ApproximateNumberOfRedeliveredMessages"
REDELIVERIES = "Hopper.ApproximateNumberOfRedeliveries"
DEAD_LETTER_QUEUE_DEPTH = "Hopper.DeadLetterQueueDepth"
OPERATOR_ATTRIBUTE_NAMES = (
    AGE_OF_OLDEST_MESSAGE,
    AGE_OF_OLDEST_VISIBLE_MESSAGE,
    REDELIVERED_MESSAGES,
    REDELIVERIES,
    DEAD_LETTER_QUEUE_DEPTH,
    MAXIMUM_QUEUE_DEPTH,
    RETRY_POLICY,
    DISPATCH,
)
_FROM_STATS = frozenset(OPERATOR_ATTRIBUTE_NAMES) - {
    DEAD_LETTER_QUEUE_DEPTH, MAXIMUM_QUEUE_DEPTH, RETRY_POLICY, DISPATCH
}


def check_queue_attribute_names(names: Iterable[str]) -> list[str]:
    """The names a GetQueueAttributes asked for, in table order (`All` expands to SQS's
    own, `Hopper.All` to hopper's extensions); an unknown name is InvalidAttributeName."""
    wanted = set(names)
    for name in wanted:
        known = name in QUEUE_ATTRIBUTE_NAMES or name in OPERATOR_ATTRIBUTE_NAMES
        if name not in ("All", HOPPER_ALL) and not known:
            raise unknown_attribute(name)
    if HOPPER_ALL in wanted:
        wanted.update(OPERATOR_ATTRIBUTE_NAMES)
    standard = list(QUEUE_ATTRIBUTE_NAMES) if "All" in wanted else [
        name for name in QUEUE_ATTRIBUTE_NAMES if name in wanted
    ]
    return standard + [name for name in OPERATOR_ATTRIBUTE_NAMES if name in wanted]


def needs_dead_letter_depth(names: Iterable[str]) -> bool:
    return DEAD_LETTER_QUEUE_DEPTH in names


def operator_attributes(
    stats: QueueStats | None, dead_letter_depth: int | None, now: float, names: Iterable[str]
) -> dict[str, str]:
    """The extension attributes asked for: ages in whole seconds (0 for an empty queue),
    counts as integers; the dead-letter depth only for a queue with a dead-letter rule."""
    values: dict[str, str] = {}
    if stats is not None:
        values[AGE_OF_OLDEST_MESSAGE] = _age(stats.oldest_sent_at, now)
        values[AGE_OF_OLDEST_VISIBLE_MESSAGE] = _age(stats.oldest_visible_sent_at, now)
        values[REDELIVERED_MESSAGES] = str(stats.redelivered)
        values[REDELIVERIES] = str(stats.redeliveries)
    if dead_letter_depth is not None:
        values[DEAD_LETTER_QUEUE_DEPTH] = str(dead_letter_depth)
    return {name: values[name] for name in names if name in values}


def _age(sent_at: float | None, now: float) -> str:
    return "0" if sent_at is None else str(max(int(now - sent_at), 0))


def needs_stats(names: Iterable[str]) -> bool:
    return any(name in _COUNTS or name in _FROM_STATS for name in names)


def queue_attributes(
    ctx: RequestContext, record: QueueRecord, stats: QueueStats | None, names: Iterable[str]
) -> dict[str, str]:
    """GetQueueAttributes' `Attributes`: each requested attribute the queue has, as
    SQS's text. FIFO-only attributes appear only on FIFO queues; unset optional ones
    (RedrivePolicy, Policy, ...) are left out, as AWS leaves them out."""
    values = _all_values(ctx, record, stats)
    return {name: values[name] for name in names if name in values}


def _all_values(
    ctx: RequestContext, record: QueueRecord, stats: QueueStats | None
) -> dict[str, str]:
    config = record.config
    values: dict[str, str] = {
        "QueueArn": queue_arn(ctx, record.key),
        "CreatedTimestamp": str(int(record.created_at)),
        "LastModifiedTimestamp": str(int(record.last_modified_at)),
        "VisibilityTimeout": _whole(config.visibility_timeout),
        "MaximumMessageSize": str(config.maximum_message_size),
        "MessageRetentionPeriod": _whole(config.message_retention_period),
        "DelaySeconds": _whole(config.delay_seconds),
        "ReceiveMessageWaitTimeSeconds": _whole(config.receive_message_wait_time_seconds),
        # New queues get SSE-SQS unless a KMS key is set (AWS's default since 2022).
        "SqsManagedSseEnabled": "false" if config.extra.get("KmsMasterKeyId") else "true",
    }
    if stats is not None:
        values["ApproximateNumberOfMessages"] = str(stats.visible)
        values["ApproximateNumberOfMessagesNotVisible"] = str(stats.in_flight)
        values["ApproximateNumberOfMessagesDelayed"] = str(stats.delayed)
    if config.dead_letter is not None:
        values["RedrivePolicy"] = redrive_policy_text(ctx, config.dead_letter)
    if config.maximum_depth is not None:
        values[MAXIMUM_QUEUE_DEPTH] = str(config.maximum_depth)
    if config.retry_policy is not None:
        values[RETRY_POLICY] = retry_policy_text(config.retry_policy)
    if config.dispatch is not None:
        values[DISPATCH] = dispatch_text(config.dispatch)
    values.update(config.extra)
    if values.get("KmsMasterKeyId"):
        # One encryption at a time: a KMS key set later turns SQS-managed encryption off
        # (as AWS reports it), whatever SqsManagedSseEnabled said before. AWS's default
        # data key reuse period is shown once a KMS key is set.
        values["SqsManagedSseEnabled"] = "false"
        values.setdefault("KmsDataKeyReusePeriodSeconds", "300")
    if config.fifo:
        values["FifoQueue"] = "true"
        values["ContentBasedDeduplication"] = _bool_text(config.content_based_deduplication)
        values.setdefault("DeduplicationScope", "queue")
        values.setdefault("FifoThroughputLimit", "perQueue")
    else:
        for name in _FIFO_ATTRIBUTES:
            values.pop(name, None)
    return values


def _whole(seconds: float) -> str:
    return str(int(seconds))


def _bool_text(value: bool) -> str:
    return "true" if value else "false"


