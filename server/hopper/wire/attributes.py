"""Queue attributes and message attributes as SQS names and spells them.

The queue attribute table joins each settable SQS attribute to its `QueueConfig` field
(or to `extra`, for the ones the core only stores and echoes), with its parser and
its range. `settings_from` turns a client's `Attributes` into the `settings` mapping
QueueService.create_queue / set_queue_attributes take; `queue_attributes` renders
GetQueueAttributes. The message half selects the system and user attributes a
ReceiveMessage asked for.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from hopper.core import limits
from hopper.core.model import (
    DeadLetterRule,
    Delivery,
    MessageAttribute,
    QueueRecord,
    QueueStats,
)
from hopper.wire.context import RequestContext
from hopper.wire.errors import SqsError
from hopper.wire.queue_urls import parse_queue_arn, queue_arn


@dataclass(frozen=True)
class _Setting:
    """One settable attribute: where it goes and how its text is read."""

    field: str  # the QueueConfig field, or "extra"
    parse: Callable[[str, str], Any]  # (SQS name, text) -> typed value, or raise
    fifo_only: bool = False


def _invalid(name: str) -> SqsError:
    # AWS's text for a value out of range or of the wrong kind.
    return SqsError("InvalidAttributeValue", f"Invalid value for the parameter {name}.")


def _integer(low: int, high: int) -> Callable[[str, str], int]:
    def parse(name: str, text: str) -> int:
        stripped = text.strip()
        if not stripped.lstrip("+-").isdigit() or not low <= int(stripped) <= high:
            raise _invalid(name)
        return int(stripped)

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
    try:
        json.loads(text)
    except ValueError:
        raise _invalid(name) from None
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


# hopper's depth ceiling, a settable extension attribute (see the operator ones below).
MAXIMUM_QUEUE_DEPTH = "Hopper.MaximumQueueDepth"

_SETTINGS: dict[str, _Setting] = {
    "VisibilityTimeout": _Setting("visibility_timeout", _seconds(0, limits.MAX_VISIBILITY_TIMEOUT)),
    "MaximumMessageSize": _Setting(
        "maximum_message_size", _integer(limits.MIN_MESSAGE_SIZE_SETTING, limits.MAX_MESSAGE_SIZE)
    ),
    "MessageRetentionPeriod": _Setting(
        "message_retention_period",
        _seconds(limits.MIN_RETENTION_SECONDS, limits.MAX_RETENTION_SECONDS),
    ),
    "DelaySeconds": _Setting("delay_seconds", _seconds(0, limits.MAX_DELAY_SECONDS)),
    "ReceiveMessageWaitTimeSeconds": _Setting(
        "receive_message_wait_time_seconds", _seconds(0, limits.MAX_WAIT_TIME_SECONDS)
    ),
    "RedrivePolicy": _Setting("dead_letter", lambda name, text: parse_redrive_policy(text)),
    "FifoQueue": _Setting("fifo", _boolean),
    # The core knows ContentBasedDeduplication is FIFO-only and says so itself.
    "ContentBasedDeduplication": _Setting("content_based_deduplication", _boolean),
    "Policy": _Setting("extra", _json_text),
    "RedriveAllowPolicy": _Setting("extra", lambda name, text: check_redrive_allow_policy(text)),
    "KmsMasterKeyId": _Setting("extra", _verbatim),
    "KmsDataKeyReusePeriodSeconds": _Setting("extra", lambda n, t: str(_integer(60, 86_400)(n, t))),
    "SqsManagedSseEnabled": _Setting("extra", _boolean_text),
    "DeduplicationScope": _Setting("extra", _one_of("messageGroup", "queue"), fifo_only=True),
    "FifoThroughputLimit": _Setting(
        "extra", _one_of("perQueue", "perMessageGroupId"), fifo_only=True
    ),
    MAXIMUM_QUEUE_DEPTH: _Setting("maximum_depth", _depth),
}

_READ_ONLY = (
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesNotVisible",
    "ApproximateNumberOfMessagesDelayed",
    "CreatedTimestamp",
    "LastModifiedTimestamp",
    "QueueArn",
)

_FIELD_NAMES = {s.field: name for name, s in _SETTINGS.items() if s.field != "extra"}


def sqs_attribute_name(field: str) -> str:
    """The SQS attribute name of a QueueConfig field (`visibility_timeout` ->
    `VisibilityTimeout`); anything else (an extra's SQS name) is returned unchanged."""
    return _FIELD_NAMES.get(field, field)


def unknown_attribute(name: str) -> SqsError:
    return SqsError("InvalidAttributeName", f"Unknown Attribute {name}.")


# --- setting --------------------------------------------------------------------------


def settings_from(attributes: Mapping[str, str], *, fifo: bool) -> dict[str, Any]:
    """The `settings` mapping for QueueService: QueueConfig field -> typed value, and
    `extra` -> {SQS name: text} for the attributes the core only echoes. `fifo` is the
    queue's type (for CreateQueue, what FifoQueue says). Read-only and unknown names
    are InvalidAttributeName, bad values InvalidAttributeValue."""
    settings: dict[str, Any] = {}
    extra: dict[str, str] = {}
    for name, text in attributes.items():
        setting = _SETTINGS.get(name)
        if setting is None or (setting.fifo_only and not fifo):
            raise unknown_attribute(name)
        value = setting.parse(name, text)
        if setting.field == "extra":
            extra[name] = value
        else:
            settings[setting.field] = value
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


_REDRIVE_PERMISSIONS = ("allowAll", "denyAll", "byQueue")


def check_redrive_allow_policy(text: str) -> str:
    """RedriveAllowPolicy's JSON `{"redrivePermission": allowAll|denyAll|byQueue,
    "sourceQueueArns": [...]}` (the ARNs with byQueue only, 1 to 10 of them); stored as
    sent. An empty text removes the policy."""
    if text == "":
        return text
    try:
        policy = json.loads(text)
    except ValueError:
        policy = None
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
    return SqsError(
        "InvalidParameterValue",
        f"Value {text} for parameter RedriveAllowPolicy is invalid. Reason: {reason}",
    )


def requested_fifo(attributes: Mapping[str, str]) -> bool:
    """Whether a CreateQueue's attributes ask for a FIFO queue."""
    text = attributes.get("FifoQueue")
    return text is not None and _boolean("FifoQueue", text)


def parse_redrive_policy(text: str) -> DeadLetterRule | None:
    """RedrivePolicy's JSON `{"deadLetterTargetArn": ..., "maxReceiveCount": ...}`; an
    empty text removes the policy (as on AWS)."""
    if text == "":
        return None
    try:
        policy = json.loads(text)
    except ValueError:
        policy = None
    if not isinstance(policy, dict):
        raise redrive_error(text, "Redrive policy is not a valid JSON map.")
    for member in ("deadLetterTargetArn", "maxReceiveCount"):
        if member not in policy:
            raise redrive_error(
                text, f"Redrive policy does not contain mandatory attribute: {member}."
            )
    arn = policy["deadLetterTargetArn"]
    target = parse_queue_arn(arn) if isinstance(arn, str) else None
    if target is None:
        raise redrive_error(text, "Invalid value for deadLetterTargetArn.")
    return DeadLetterRule(target, _max_receive_count(text, policy["maxReceiveCount"]))


def _max_receive_count(text: str, value: Any) -> int:
    low, high = limits.MIN_MAX_RECEIVE_COUNT, limits.MAX_MAX_RECEIVE_COUNT
    count: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        count = value
    elif isinstance(value, str) and value.strip().isdigit():
        count = int(value.strip())
    if count is None or not low <= count <= high:
        raise redrive_error(
            text,
            f"Invalid value for maxReceiveCount: {value}, valid values are from {low} to "
            f"{high} both inclusive.",
        )
    return count


def redrive_error(text: str, reason: str) -> SqsError:
    """How AWS refuses a RedrivePolicy: an invalid value of the parameter, quoted."""
    return SqsError(
        "InvalidParameterValue",
        f"Value {text} for parameter RedrivePolicy is invalid. Reason: {reason}",
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
)
_FROM_STATS = frozenset(OPERATOR_ATTRIBUTE_NAMES) - {DEAD_LETTER_QUEUE_DEPTH, MAXIMUM_QUEUE_DEPTH}


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


def redrive_policy_text(ctx: RequestContext, rule: DeadLetterRule) -> str:
    """RedrivePolicy as AWS returns it: compact JSON, deadLetterTargetArn first and
    maxReceiveCount as a number."""
    policy = {
        "deadLetterTargetArn": queue_arn(ctx, rule.target),
        "maxReceiveCount": rule.max_receive_count,
    }
    return json.dumps(policy, separators=(",", ":"))


def _whole(seconds: float) -> str:
    return str(int(seconds))


def _bool_text(value: bool) -> str:
    return "true" if value else "false"


# --- message attributes on receive ------------------------------------------------------

# hopper's extension: the delivery's fencing token, returned when asked for by name or All.
FENCING_TOKEN = "FencingToken"


def system_attributes(
    ctx: RequestContext, delivery: Delivery, requested: Iterable[str]
) -> dict[str, str]:
    """The message system attributes a receive asked for (`AttributeNames` and
    `MessageSystemAttributeNames` together; `All` is every one this message has)."""
    wanted = set(requested)
    if not wanted:  # the common receive: none asked for, none built
        return {}
    values = _system_values(ctx, delivery)
    if "All" in wanted:
        return values
    return {name: value for name, value in values.items() if name in wanted}


def _system_values(ctx: RequestContext, delivery: Delivery) -> dict[str, str]:
    message = delivery.message
    values = {
        "SenderId": ctx.account,
        "SentTimestamp": _millis(message.sent_at),
        "ApproximateReceiveCount": str(delivery.receive_count),
        "ApproximateFirstReceiveTimestamp": _millis(delivery.first_received_at),
    }
    optional = {
        "SequenceNumber": None if message.sequence_number is None else str(message.sequence_number),
        "MessageDeduplicationId": message.deduplication_id,
        "MessageGroupId": message.group_id,
        "AWSTraceHeader": message.trace_header,
        "DeadLetterQueueSourceArn": (
            None
            if message.dead_letter_source is None
            else queue_arn(ctx, message.dead_letter_source)
        ),
    }
    values.update({name: value for name, value in optional.items() if value is not None})
    values[FENCING_TOKEN] = str(delivery.token)
    return values


def _millis(epoch_seconds: float) -> str:
    return str(int(epoch_seconds * 1000))


def select_message_attributes(
    attributes: Mapping[str, MessageAttribute], requested: Iterable[str]
) -> dict[str, MessageAttribute]:
    """The user attributes `MessageAttributeNames` selects: `All` or `.*` for every one,
    `prefix.*` for names starting with `prefix` (AWS gives `Hello` and `Help.Me` for
    `Hel.*`: LocalStack's AWS snapshot test_receive_message_message_attribute_names_filters),
    otherwise exact names."""
    patterns = list(requested)
    if any(pattern in ("All", ".*") for pattern in patterns):
        return dict(attributes)
    return {
        name: attribute
        for name, attribute in attributes.items()
        if any(_matches(name, pattern) for pattern in patterns)
    }


def _matches(name: str, pattern: str) -> bool:
    if pattern.endswith(".*"):
        return name.startswith(pattern[:-2])
    return name == pattern


def attribute_value(attribute: MessageAttribute) -> dict[str, Any]:
    """A user attribute in the result shape; BinaryValue stays bytes (the renderers
    base64 it)."""
    value: dict[str, Any] = {"DataType": attribute.data_type}
    if attribute.binary_value is not None:
        value["BinaryValue"] = attribute.binary_value
    if attribute.string_value is not None:
        value["StringValue"] = attribute.string_value
    return value
