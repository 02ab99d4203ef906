"""Message attributes on receive: the system and user attributes a ReceiveMessage
asked for, in the result's shape."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from hopper.core.model import Delivery, MessageAttribute
from hopper.wire.context import RequestContext
from hopper.wire.queue_urls import queue_arn
from hopper.wire.sequence_numbers import sequence_number_text

# hopper's extension: the delivery's fencing token, returned only when asked for by name
# (never for All, so the set an SDK or a recorded test sees for All is exactly AWS's).
FENCING_TOKEN = "FencingToken"
# hopper's extension: why the message's latest dispatch failed (core/model.py's
# StoredMessage.last_error), likewise only by name.
LAST_ERROR = "Hopper.LastError"
_BY_NAME_ONLY = frozenset({FENCING_TOKEN, LAST_ERROR})
# `*` is recorded on AWS as selecting every user attribute, as `All` and `.*` do.
_EVERY_ATTRIBUTE = frozenset({"All", "*", ".*"})


def system_attributes(
    ctx: RequestContext, delivery: Delivery, requested: Iterable[str]
) -> dict[str, str]:
    """The message system attributes a receive asked for (`AttributeNames` and
    `MessageSystemAttributeNames` together; `All` is every AWS one this message has,
    and hopper's `FencingToken` and `Hopper.LastError` only when named)."""
    wanted = set(requested)
    if not wanted:  # the common receive: none asked for, none built
        return {}
    values = _system_values(ctx, delivery)
    if "All" in wanted:
        return {
            name: value
            for name, value in values.items()
            if name not in _BY_NAME_ONLY or name in wanted
        }
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
        "SequenceNumber": (
            None
            if message.sequence_number is None
            else sequence_number_text(message.sequence_number)
        ),
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
    if message.last_error is not None:
        values[LAST_ERROR] = message.last_error
    return values


def _millis(epoch_seconds: float) -> str:
    return str(int(epoch_seconds * 1000))


def select_message_attributes(
    attributes: Mapping[str, MessageAttribute], requested: Iterable[str]
) -> dict[str, MessageAttribute]:
    """The user attributes `MessageAttributeNames` selects: `All`, `*` or `.*` for every one,
    `prefix.*` for names starting with `prefix` (AWS gives `Hello` and `Help.Me` for
    `Hel.*`: LocalStack's AWS snapshot test_receive_message_message_attribute_names_filters),
    otherwise exact names."""
    patterns = list(requested)
    if any(pattern in _EVERY_ATTRIBUTE for pattern in patterns):
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
