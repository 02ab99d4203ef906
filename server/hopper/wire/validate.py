"""Reading request parameters: one set of rules for both protocols.

Parameters arrive in the JSON protocol's shape, but scalars are JSON numbers and
booleans from a JSON client and strings from a query client; every reader here accepts
both. A value of the wrong kind is InvalidParameterValue, a missing one MissingParameter,
worded as AWS words them. Rules the core keeps (attribute names, sizes, FIFO rules) are
not repeated here: this module only turns wire values into core values.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping, Sequence
from typing import Any

from hopper.core import characters, limits
from hopper.core.model import MessageAttribute
from hopper.wire.context import RequestContext
from hopper.wire.errors import SqsError, invalid_parameter_value, missing_parameter

# ASCII digits only: \d and str.isdigit admit digits int() reads ("٣") or refuses ("²").
_INTEGER = re.compile(r"[+-]?0*([0-9]{1,18})")
# A JSON integer beyond 64 bits is no SQS integer, and beyond float range it could not
# even be compared with a float deadline.
_INTEGER_LIMIT = 2**63
_ENTRY_ID = re.compile(r"[A-Za-z0-9_-]{1,80}")
_TRACE_HEADER = "AWSTraceHeader"


def required(params: Mapping[str, Any], name: str) -> Any:
    """The parameter's value; MissingParameter when it is absent or null."""
    value = params.get(name)
    if value is None:
        raise missing_parameter(name)
    return value


def as_str(params: Mapping[str, Any], name: str, *, default: str | None = None) -> str | None:
    value = params.get(name)
    if value is None:
        return default
    if not isinstance(value, str):
        raise invalid_parameter_value(name, value, f"{name} must be a string.")
    return value


def required_str(params: Mapping[str, Any], name: str) -> str:
    value = as_str(params, name)
    if value is None:
        raise missing_parameter(name)
    return value


def as_int(params: Mapping[str, Any], name: str) -> int | None:
    """An integer parameter: a JSON integer or a query string of digits; None when
    absent. Anything else (3.5, "abc", true) is InvalidParameterValue."""
    value = params.get(name)
    if value is None:
        return None
    return to_int(name, value)


def to_int(name: str, value: Any) -> int:
    if isinstance(value, bool):
        raise _not_integer(name, value)
    if isinstance(value, int) and -_INTEGER_LIMIT < value < _INTEGER_LIMIT:
        return value
    if isinstance(value, float) and value.is_integer() and abs(value) < _INTEGER_LIMIT:
        return int(value)
    if isinstance(value, str):
        number = parse_integer(value)
        if number is not None:
            return number
    raise _not_integer(name, value)


def parse_integer(text: str) -> int | None:
    """The integer a text of ASCII digits (sign and surrounding blanks allowed) spells,
    or None: for other text, and for more than 18 significant digits, which no SQS
    integer has (and thousands of which would make int() raise)."""
    match = _INTEGER.fullmatch(text.strip())
    if match is None:
        return None
    # int() counts leading zeros against its digit limit: read the significant ones.
    value = int(match.group(1))
    return -value if text.strip().startswith("-") else value


def _not_integer(name: str, value: Any) -> SqsError:
    return invalid_parameter_value(name, _quoted(value), f"{name} must be an integer.")


def as_bool(params: Mapping[str, Any], name: str) -> bool | None:
    value = params.get(name)
    if value is None:
        return None
    return to_bool(name, value)


def to_bool(name: str, value: Any) -> bool:
    """A JSON boolean, or the query protocol's "true" / "false" (any case)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise invalid_parameter_value(name, _quoted(value), f"{name} must be true or false.")


def as_str_list(params: Mapping[str, Any], name: str) -> list[str]:
    """A list of strings; [] when absent."""
    value = params.get(name)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise invalid_parameter_value(name, _quoted(value), f"{name} must be a list of strings.")
    return value


def as_str_map(params: Mapping[str, Any], name: str) -> dict[str, str]:
    """A map of string to string (attributes, tags); {} when absent. JSON numbers and
    booleans are accepted as their query spelling, since some clients send them."""
    value = params.get(name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise invalid_parameter_value(name, _quoted(value), f"{name} must be a map.")
    return {str(key): _text(item) for key, item in value.items()}


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    raise SqsError("InvalidParameterValue", f"The value {value!r} is not a string.")


def _quoted(value: Any) -> str:
    # A structure is named, not echoed: it may be large, or nested past repr's reach.
    if isinstance(value, list):
        return "[...]"
    if isinstance(value, dict):
        return "{...}"
    return value if isinstance(value, str) else repr(value)


# --- the request as a whole ----------------------------------------------------------

# Members whose text the core checks itself, with SQS's own answers (message contents:
# InvalidMessageContents), and batch entries, each of which fails alone.
_OWN_RULES = frozenset({"MessageBody", "MessageAttributes", "MessageSystemAttributes", "Entries"})
# No SQS parameter nests deeper (Entries > entry > MessageAttributes > attribute >
# StringListValues > text); deeper input is refused before any code walks it.
MAX_DEPTH = 8


def check_request(params: Mapping[str, Any]) -> None:
    """Refuse, before any handler sees it, a request nested deeper than any SQS
    parameter or holding text outside SQS's characters (NUL, other control characters,
    lone surrogates) in a name or value that would otherwise reach a store or be echoed.
    Walked with an explicit stack: no recursion, whatever the input."""
    pending: list[tuple[str, Any, int, bool]] = [
        (_name(name), value, 1, name in _OWN_RULES) for name, value in params.items()
    ]
    while pending:
        name, value, depth, own = pending.pop()
        if depth > MAX_DEPTH:
            raise SqsError(
                "InvalidParameterValue", f"The value of parameter {name} is nested too deeply."
            )
        if isinstance(value, str):
            if not own and not characters.allowed(value):
                raise _forbidden(name)
        elif isinstance(value, dict):
            for key, item in value.items():
                if not own and not characters.allowed(str(key)):
                    raise _forbidden(name)
                pending.append((name, item, depth + 1, own))
        elif isinstance(value, list):
            pending.extend((name, item, depth + 1, own) for item in value)


def _name(name: str) -> str:
    if not characters.allowed(name):
        raise SqsError(
            "InvalidParameterValue",
            "A parameter name contains a character outside the allowed set "
            + characters.ALLOWED_SET + ".",
        )
    return name


def _forbidden(name: str) -> SqsError:
    return SqsError(
        "InvalidParameterValue",
        f"Value for parameter {name} is invalid. Reason: it contains a character outside "
        "the allowed set " + characters.ALLOWED_SET + ".",
    )


# --- message attributes -------------------------------------------------------------


def message_attributes(raw: Any) -> dict[str, MessageAttribute]:
    """`MessageAttributes` decoded into core values: DataType required, BinaryValue
    base64-decoded for Binary types, StringValue kept for String and Number types.
    The core checks names, counts, emptiness and number syntax."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise SqsError("InvalidParameterValue", "MessageAttributes must be a map.")
    return {str(name): _message_attribute(str(name), value) for name, value in raw.items()}


def _message_attribute(name: str, value: Any) -> MessageAttribute:
    if not isinstance(value, dict):
        raise SqsError(
            "InvalidParameterValue", f"Message (user) attribute '{name}' must be a structure."
        )
    data_type = value.get("DataType")
    if not isinstance(data_type, str) or not data_type:
        raise SqsError(
            "InvalidParameterValue",
            f"The message attribute '{name}' must contain non-empty message attribute type.",
        )
    if value.get("StringListValues") or value.get("BinaryListValues"):
        raise SqsError(
            "InvalidParameterValue",
            "Message attribute list values in SendMessage operation are not supported.",
        )
    if data_type.split(".", 1)[0] == "Binary":
        return MessageAttribute(data_type, binary_value=_binary(name, value.get("BinaryValue")))
    string_value = value.get("StringValue")
    if string_value is not None and not isinstance(string_value, str):
        string_value = _text(string_value)
    return MessageAttribute(data_type, string_value=string_value)


def _binary(name: str, text: Any) -> bytes | None:
    """BinaryValue arrives as base64 text in both protocols."""
    if text is None:
        return None
    if not isinstance(text, str):
        raise _bad_binary(name)
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise _bad_binary(name) from None


def _bad_binary(name: str) -> SqsError:
    return SqsError(
        "InvalidParameterValue",
        f"Message (user) attribute '{name}' has an invalid binary value: it must be base64.",
    )


def trace_header(raw: Any, ctx: RequestContext) -> str | None:
    """The AWSTraceHeader a send carries: from `MessageSystemAttributes` (the only
    system attribute a sender may set, of DataType String), else the request's
    X-Amzn-Trace-Id header, as AWS takes it from there for X-Ray."""
    if not raw:
        return ctx.trace_header
    if not isinstance(raw, dict):
        raise SqsError("InvalidParameterValue", "MessageSystemAttributes must be a map.")
    for name in raw:
        if name != _TRACE_HEADER:
            raise SqsError(
                "InvalidParameterValue",
                f"Message system attribute name '{name}' is invalid.",
            )
    value = raw[_TRACE_HEADER]
    if not isinstance(value, dict) or value.get("DataType") != "String":
        raise SqsError(
            "InvalidParameterValue",
            f"Message system attribute '{_TRACE_HEADER}' must have DataType String.",
        )
    text = value.get("StringValue")
    if not isinstance(text, str) or not text:
        raise SqsError(
            "InvalidParameterValue",
            f"Message system attribute '{_TRACE_HEADER}' must contain a non-empty value "
            "of type 'String'.",
        )
    return text


# --- batches -----------------------------------------------------------------------


def batch_entries(params: Mapping[str, Any], entry_type: str) -> list[dict[str, Any]]:
    """The `Entries` of a batch action, checked as one before any entry is acted on:
    at least one, at most ten, each a structure with an Id of 1..80 of [A-Za-z0-9_-],
    Ids distinct. `entry_type` is the query name of an entry, as AWS's texts use it
    (SendMessageBatchRequestEntry, ...)."""
    entries = params.get("Entries")
    if entries is None or entries == []:
        raise SqsError(
            "EmptyBatchRequest", f"There should be at least one {entry_type} in the request."
        )
    if not isinstance(entries, list):
        raise SqsError("InvalidParameterValue", "Entries must be a list.")
    if len(entries) > limits.MAX_BATCH_ENTRIES:
        raise SqsError(
            "TooManyEntriesInBatchRequest",
            f"Maximum number of entries per request are {limits.MAX_BATCH_ENTRIES}. "
            f"You have sent {len(entries)}.",
        )
    seen: set[str] = set()
    for index, entry in enumerate(entries, start=1):
        entry_id = _entry_id(entry, f"{entry_type}.{index}.Id")
        if entry_id in seen:
            raise SqsError("BatchEntryIdsNotDistinct", f"Id {entry_id} repeated.")
        seen.add(entry_id)
    return entries


def _entry_id(entry: Any, label: str) -> str:
    if not isinstance(entry, dict) or entry.get("Id") is None:
        raise missing_parameter(label)
    entry_id = entry["Id"]
    if not isinstance(entry_id, str) or _ENTRY_ID.fullmatch(entry_id) is None:
        raise SqsError(
            "InvalidBatchEntryId",
            "A batch entry id can only contain alphanumeric characters, hyphens and "
            "underscores. It can be at most 80 letters long.",
        )
    return entry_id


def names_only(values: Sequence[str]) -> list[str]:
    """Names in first-seen order without repeats (AttributeNames may repeat one)."""
    return list(dict.fromkeys(values))
