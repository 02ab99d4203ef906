"""Message rules: what SQS accepts in a send, and how big a message is.

`prepare` turns a client's MessageDraft into the NewMessage a store enqueues, or
raises the QueueError SQS would answer with. Texts are AWS's where known.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Mapping, Sequence

from hopper.core import characters, fifo, limits
from hopper.core.errors import (
    InvalidMessageContents,
    InvalidParameter,
    InvalidParameterRule,
    MessageTooLong,
    MissingParameter,
)
from hopper.core.model import MessageAttribute, MessageDraft, NewMessage, QueueConfig

# AWS also takes the Latin letters of U+00C0-U+017F (recorded: `attr.1øßä` is accepted).
_ATTRIBUTE_NAME = re.compile("[A-Za-z0-9_.\u00c0-\u017f-]{1,256}")
_MAX_DATA_TYPE_LENGTH = 255
_RESERVED_PREFIXES = ("aws.", "amazon.")
_DATA_TYPE = re.compile(r"(String|Number|Binary)(\.[^\s]+)?")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_NOT_FOR_QUEUE_TYPE = "The request include parameter that is not valid for this queue type."
_NO_DEDUPLICATION = (
    "The queue should either have ContentBasedDeduplication enabled or "
    "MessageDeduplicationId provided explicitly"
)


def number_text(value: float) -> str:
    """A number as AWS quotes it in error texts: 2, not 2.0."""
    return str(int(value)) if float(value).is_integer() else str(value)


def size(draft: MessageDraft) -> int:
    """SQS's message size: UTF-8 bytes of the body, plus for each attribute its name,
    data type and value bytes."""
    total = len(draft.body.encode("utf-8", "surrogatepass"))
    for name, attribute in draft.attributes.items():
        # surrogatepass: a size is asked of drafts not yet checked (a batch's total),
        # whose texts may hold lone surrogates that `prepare` then refuses.
        total += len(name.encode("utf-8", "surrogatepass"))
        total += len(attribute.data_type.encode("utf-8", "surrogatepass"))
        if attribute.binary_value is not None:
            total += len(attribute.binary_value)
        if attribute.string_value is not None:
            total += len(attribute.string_value.encode("utf-8", "surrogatepass"))
    return total


def prepare(draft: MessageDraft, config: QueueConfig, message_id: str) -> NewMessage:
    """The NewMessage for `draft` on a queue with `config`.

    Raises MissingParameter (empty body; FIFO without group id), InvalidMessageContents,
    MessageTooLong, InvalidParameter (attributes, delay, FIFO rules)."""
    if draft.body == "":
        raise MissingParameter("MessageBody")
    if not characters.allowed(draft.body):
        raise InvalidMessageContents("message body")
    # Checked here, per message, so that one bad entry of a batch fails alone and
    # before anything is stored.
    if draft.trace_header is not None and not characters.allowed(draft.trace_header):
        raise InvalidMessageContents("message system attribute 'AWSTraceHeader'")
    _check_attributes(draft.attributes)
    measured = size(draft)
    if measured > config.maximum_message_size:
        raise MessageTooLong(measured, config.maximum_message_size)
    if config.fifo:
        return _fifo_message(draft, config, message_id)
    return _standard_message(draft, config, message_id)


def check_batch(drafts: Sequence[MessageDraft], config: QueueConfig) -> None:
    """What fails a SendMessageBatch as a whole rather than one entry: on a FIFO queue,
    an entry without MessageGroupId (AWS answers the call with InvalidParameterValue,
    "The request must contain the parameter MessageGroupId.", as LocalStack's
    AWS-recorded snapshot test_send_batch_missing_message_group_id_for_fifo_queue shows;
    a single SendMessage answers MissingParameter); and, recorded on AWS likewise, an
    entry without MessageDeduplicationId on a queue without content-based deduplication."""
    if not config.fifo:
        return
    if any(draft.group_id is None for draft in drafts):
        raise InvalidParameterRule(
            "MessageGroupId", "", "The request must contain the parameter MessageGroupId."
        )
    if not config.content_based_deduplication and any(
        draft.deduplication_id is None for draft in drafts
    ):
        raise InvalidParameterRule("MessageDeduplicationId", "", _NO_DEDUPLICATION)


def _standard_message(draft: MessageDraft, config: QueueConfig, message_id: str) -> NewMessage:
    # A group id on a standard queue names a fair-queue tenant (see core/fairness.py).
    _check_token_id("MessageGroupId", draft.group_id)
    # A hopper extension (AWS rejects the parameter on standard queues): a deduplication
    # id here is a live key, held while its message lives (see QueueStore.send).
    _check_token_id("MessageDeduplicationId", draft.deduplication_id)
    delay = config.delay_seconds if draft.delay is None else draft.delay
    if not 0 <= delay <= limits.MAX_DELAY_SECONDS:
        raise InvalidParameter(
            "DelaySeconds",
            number_text(delay),
            f"DelaySeconds must be >= 0 and <= {limits.MAX_DELAY_SECONDS}.",
        )
    return _new(draft, message_id, delay=delay, deduplication_id=draft.deduplication_id)


def _fifo_message(draft: MessageDraft, config: QueueConfig, message_id: str) -> NewMessage:
    # FIFO queues have no message timers: only the queue's delay applies.
    if draft.delay not in (None, 0):
        raise InvalidParameter("DelaySeconds", number_text(draft.delay), _NOT_FOR_QUEUE_TYPE)
    if draft.group_id is None:
        raise MissingParameter("MessageGroupId")
    _check_token_id("MessageGroupId", draft.group_id)
    deduplication_id = draft.deduplication_id
    if deduplication_id is None:
        if not config.content_based_deduplication:
            raise InvalidParameterRule("MessageDeduplicationId", "", _NO_DEDUPLICATION)
        deduplication_id = hashlib.sha256(draft.body.encode("utf-8")).hexdigest()
    _check_token_id("MessageDeduplicationId", deduplication_id)
    message = _new(draft, message_id, delay=config.delay_seconds, deduplication_id=deduplication_id)
    key = fifo.deduplication_key(config, draft.group_id, deduplication_id)
    return message if key is None else dataclasses.replace(message, deduplication_key=key)


def _new(
    draft: MessageDraft, message_id: str, *, delay: float, deduplication_id: str | None
) -> NewMessage:
    return NewMessage(
        id=message_id,
        body=draft.body,
        attributes=dict(draft.attributes),
        trace_header=draft.trace_header,
        delay=delay,
        group_id=draft.group_id,
        deduplication_id=deduplication_id,
    )


def _check_token_id(parameter: str, value: str | None) -> None:
    if value is not None and fifo.TOKEN_ID.fullmatch(value) is None:
        raise InvalidParameter(
            parameter,
            value,
            f"{parameter} can only include alphanumeric and punctuation characters. "
            "1 to 128 in length.",
        )


def _check_attributes(attributes: Mapping[str, MessageAttribute]) -> None:
    if len(attributes) > limits.MAX_MESSAGE_ATTRIBUTES:
        raise too_many_attributes(len(attributes))
    for name, attribute in attributes.items():
        _check_attribute_name(name)
        _check_attribute_value(name, attribute)


def too_many_attributes(count: int) -> InvalidParameterRule:
    """The error for a message with `count` (> MAX_MESSAGE_ATTRIBUTES) attributes; the
    wire raises it too, before decoding a list that is already too long."""
    return InvalidParameterRule(
        "MessageAttributes",
        str(count),
        f"Number of message attributes [{count}] exceeds the allowed maximum "
        f"[{limits.MAX_MESSAGE_ATTRIBUTES}].",
    )


def _check_attribute_name(name: str) -> None:
    lowered = name.lower()
    if (
        _ATTRIBUTE_NAME.fullmatch(name) is None
        or name.startswith(".")
        or name.endswith(".")
        or ".." in name
    ):
        raise InvalidParameterRule(
            "MessageAttributeName",
            name,
            f"Message (user) attribute name '{name}' is invalid. The attribute name can "
            "contain only alphanumeric characters, hyphens, underscores and periods, must "
            "not start or end with a period, must not have successive periods and must be "
            "at most 256 characters long.",
        )
    if lowered.startswith(_RESERVED_PREFIXES):
        raise InvalidParameterRule(
            "MessageAttributeName",
            name,
            f"Message (user) attribute name '{name}' is reserved for use by SQS. "
            "Names must not start with 'AWS.' or 'Amazon.'.",
        )


def _check_attribute_value(name: str, attribute: MessageAttribute) -> None:
    if len(attribute.data_type) > _MAX_DATA_TYPE_LENGTH:
        raise InvalidParameterRule(
            "MessageAttributeDataType",
            attribute.data_type,
            f"Length of message attribute '{name}' type must be less than 256 bytes.",
        )
    match = _DATA_TYPE.fullmatch(attribute.data_type)
    if match is None or not characters.allowed(attribute.data_type):
        raise InvalidParameterRule(
            "MessageAttributeDataType",
            attribute.data_type,
            f"The type of message (user) attribute '{name}' is invalid. You must use only "
            "the following supported type prefixes: Binary, Number, String.",
        )
    base = match.group(1)
    if base == "Binary":
        if not attribute.binary_value:
            raise InvalidParameterRule("MessageAttributeValue", name, _empty(name, base))
        return
    text = attribute.string_value
    if not text:
        raise InvalidParameterRule("MessageAttributeValue", name, _empty(name, base))
    forbidden = characters.FORBIDDEN.search(text)
    if forbidden is not None:
        # An attribute value is a parameter to AWS (InvalidParameterValue, recorded),
        # where a bad body is InvalidMessageContents.
        raise InvalidParameterRule(
            "MessageAttributeValue",
            name,
            f"Invalid non-alphanumeric character '#x{ord(forbidden.group()):X}' was found "
            f"in the message attribute '{name}', the set of allowed characters is "
            f"{characters.ALLOWED_SET}",
        )
    if base == "Number" and _NUMBER.fullmatch(text.strip()) is None:
        raise InvalidParameterRule(
            "MessageAttributeValue",
            name,
            f"Can't cast the value of message (user) attribute '{name}' to a number.",
        )


def _empty(name: str, base: str) -> str:
    return f"Message (user) attribute '{name}' must contain a non-empty value of type '{base}'."
