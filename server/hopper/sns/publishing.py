"""Publish rules: what SNS accepts in a Publish or a PublishBatch entry, turned into a
`Publication`. Texts are AWS's where known.

Limits (botocore's model and the SNS Developer Guide): a message, with its attributes'
names, types and values, at most 262,144 bytes, and so a whole batch; a subject ASCII,
under 100 characters, no line breaks or control characters; at most 10 entries in a
batch, with ids of up to 80 letters, digits, `-` and `_`; MessageGroupId and
MessageDeduplicationId up to 128 letters, digits and punctuation, on FIFO topics only.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from hopper.core import characters
from hopper.core.model import MessageAttribute
from hopper.sns.errors import BatchError, InvalidParameter, InvalidParameterValue, invalid
from hopper.sns.model import Publication, Topic

MAX_MESSAGE_BYTES = 262_144
MAX_SUBJECT_LENGTH = 99
MAX_BATCH_ENTRIES = 10
MAX_ATTRIBUTES = 10
_BATCH_ID = re.compile(r"[A-Za-z0-9_-]{1,80}")
_TOKEN = re.compile(r"[A-Za-z0-9!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~]{1,128}")
_SUBJECT = re.compile(r"[\x20-\x7e]+")
_ATTRIBUTE_NAME = re.compile(r"[A-Za-z0-9_.-]{1,256}")
_DATA_TYPE = re.compile(r"(String|Number|Binary)(\.[^\s]+)?|String\.Array")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


@dataclass(frozen=True)
class PublishDraft:
    """A message as the client asked to publish it."""

    message: str | None
    subject: str | None = None
    structure: str | None = None
    attributes: Mapping[str, MessageAttribute] = field(default_factory=dict)
    group_id: str | None = None
    deduplication_id: str | None = None


def size(draft: PublishDraft) -> int:
    """SNS's message size: the message's UTF-8 bytes and each attribute's name, type
    and value."""
    total = len((draft.message or "").encode("utf-8", "surrogatepass"))
    for name, attribute in draft.attributes.items():
        total += len(name.encode("utf-8", "surrogatepass"))
        total += len(attribute.data_type.encode("utf-8", "surrogatepass"))
        if attribute.binary_value is not None:
            total += len(attribute.binary_value)
        total += len((attribute.string_value or "").encode("utf-8", "surrogatepass"))
    return total


def prepare(topic: Topic, draft: PublishDraft, message_id: str, now: float) -> Publication:
    """The Publication of `draft` on `topic`. Raises InvalidParameter,
    InvalidParameterValue."""
    if draft.message is None:
        raise InvalidParameter("Invalid parameter: Message")
    if draft.message == "":
        raise invalid("Empty message")
    if not characters.allowed(draft.message):
        raise invalid("Message contains invalid characters")
    if size(draft) > MAX_MESSAGE_BYTES:
        raise invalid("Message too long")
    _check_subject(draft.subject)
    _check_attributes(draft.attributes)
    per_protocol = _structure(draft)
    group_id, deduplication_id = _fifo(topic, draft)
    return Publication(
        id=message_id,
        topic_arn=topic.arn,
        message=per_protocol.get("default", draft.message),
        timestamp=now,
        subject=draft.subject,
        attributes=draft.attributes,
        per_protocol=per_protocol,
        group_id=group_id,
        deduplication_id=deduplication_id,
    )


def _check_subject(subject: str | None) -> None:
    if subject is None:
        return
    if not _SUBJECT.fullmatch(subject) or len(subject) > MAX_SUBJECT_LENGTH:
        raise invalid("Subject")


def _structure(draft: PublishDraft) -> dict[str, str]:
    """MessageStructure=json: the text per protocol ("default" required)."""
    if draft.structure is None:
        return {}
    if draft.structure != "json":
        raise invalid("MessageStructure")
    try:
        parsed = json.loads(draft.message or "")
    except (ValueError, RecursionError):
        raise invalid("Message Structure - JSON message body failed to parse") from None
    if not isinstance(parsed, dict) or not isinstance(parsed.get("default"), str):
        raise invalid("Message Structure - No default entry in JSON message body")
    # Keys with values that are not strings are ignored (the API reference).
    return {key: value for key, value in parsed.items() if isinstance(value, str)}


def _fifo(topic: Topic, draft: PublishDraft) -> tuple[str | None, str | None]:
    if not topic.fifo:
        for name, value in (("MessageGroupId", draft.group_id),
                            ("MessageDeduplicationId", draft.deduplication_id)):
            if value is not None:
                raise invalid(
                    f"{name} Reason: The request includes {name} parameter that is not "
                    "valid for this topic type"
                )
        return None, None
    if draft.group_id is None:
        raise invalid("The MessageGroupId parameter is required for FIFO topics")
    _check_token("MessageGroupId", draft.group_id)
    dedup = draft.deduplication_id
    if dedup is None:
        if topic.attributes.get("ContentBasedDeduplication") != "true":
            raise invalid(
                "The topic should either have ContentBasedDeduplication enabled or "
                "MessageDeduplicationId provided explicitly"
            )
        # SHA-256 of the body, not the attributes (the API reference).
        dedup = hashlib.sha256((draft.message or "").encode("utf-8")).hexdigest()
    _check_token("MessageDeduplicationId", dedup)
    return draft.group_id, dedup


def _check_token(name: str, value: str) -> None:
    if not _TOKEN.fullmatch(value):
        raise invalid(f"{name} Reason: {name} can only include alphanumeric and punctuation "
                      "characters. 1 to 128 in length.")


def _check_attributes(attributes: Mapping[str, MessageAttribute]) -> None:
    for name, attribute in attributes.items():
        if not _ATTRIBUTE_NAME.fullmatch(name):
            raise InvalidParameterValue(
                f"Message attribute name '{name}' has an invalid character or is too long."
            )
        _check_attribute(name, attribute)


def _check_attribute(name: str, attribute: MessageAttribute) -> None:
    kind = attribute.data_type
    if not _DATA_TYPE.fullmatch(kind):
        raise InvalidParameterValue(
            f"The message attribute '{name}' has an invalid message attribute type, the set "
            "of supported type prefixes is Binary, Number, and String."
        )
    base = kind.split(".", 1)[0]
    value = attribute.binary_value if base == "Binary" else attribute.string_value
    if not value:
        label = "String" if kind == "String.Array" else base
        raise InvalidParameterValue(
            f"The message attribute '{name}' must contain non-empty message attribute value "
            f"for message attribute type '{label}'."
        )
    if base == "Number" and not _NUMBER.fullmatch(attribute.string_value or ""):
        raise InvalidParameterValue(f"Could not cast message attribute '{name}' value to number.")
    if kind == "String.Array":
        _check_array(name, attribute.string_value or "")
    if base != "Binary" and not characters.allowed(attribute.string_value or ""):
        raise InvalidParameterValue(f"The message attribute '{name}' has invalid characters.")


def _check_array(name: str, text: str) -> None:
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        parsed = None
    if not isinstance(parsed, list) or any(isinstance(v, dict | list) for v in parsed):
        raise InvalidParameterValue(
            f"The message attribute '{name}' with type 'String.Array' must be a JSON array "
            "of strings, numbers, true, false or null."
        )


def check_batch(entry_ids: Sequence[str], drafts: Sequence[PublishDraft]) -> None:
    """What refuses a whole PublishBatch: raises BatchError."""
    if not entry_ids:
        raise BatchError("EmptyBatchRequest", "The batch request doesn't contain any entries.")
    if len(entry_ids) > MAX_BATCH_ENTRIES:
        raise BatchError(
            "TooManyEntriesInBatchRequest",
            "The batch request contains more entries than permissible.",
        )
    if len(set(entry_ids)) != len(entry_ids):
        raise BatchError(
            "BatchEntryIdsNotDistinct", "Two or more batch entries in the request have the same Id."
        )
    if not all(_BATCH_ID.fullmatch(entry_id) for entry_id in entry_ids):
        raise BatchError(
            "InvalidBatchEntryId",
            "The Id of a batch entry in a batch request doesn't abide by the specification.",
        )
    if sum(size(draft) for draft in drafts) > MAX_MESSAGE_BYTES:
        raise BatchError(
            "BatchRequestTooLong",
            "The length of all the messages put together is more than the limit.",
        )
