"""Which SQS protocol a request speaks, and its (action, params) in the JSON shape.

Two protocols reach one set of handlers. The JSON protocol names its action in
`X-Amz-Target: AmazonSQS.<Action>` and sends the parameters as a JSON object, already
in the shape handlers take. The query protocol sends `Action=<Action>` and flattened
parameters (`Attribute.1.Name=...`) form-encoded in a POST body or a GET query string;
`decode_query` rebuilds the JSON shape from the names in `shapes.INPUTS`, leaving
scalars as the strings they arrived as.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hopper import jsoncodec
from hopper.core import errors as core_errors
from hopper.core import limits, messages, queues
from hopper.core.model import QueueKey
from hopper.wire import errors, forms
from hopper.wire.errors import SqsError
from hopper.wire.shapes import INPUTS

JSON_CONTENT_TYPE = "application/x-amz-json-1.0"
_TARGET = re.compile(r"AmazonSQS\.(\w+)")
# Actions that make sense only against the service endpoint, never a queue's URL
# (AWS answers GetQueueUrl on a queue URL: it names its queue by QueueName anyway).
_SERVICE_ACTIONS = frozenset({"CreateQueue", "ListQueues"})
_ABSENT: Any = object()
# The longest query-protocol body with anything valid in it: percent-encoding at most
# triples the 1 MiB a message (or a batch) may carry, and the names and other
# parameters add a few KiB. (JSON escapes can take six bytes per byte, hence the
# larger --max-body-bytes.) A longer form is refused before it is read.
MAX_QUERY_BODY_BYTES = 3 * limits.MAX_MESSAGE_SIZE + 64 * 1024


def detect_protocol(headers: Mapping[str, str]) -> str:
    """"json" when the request carries a JSON target or content type, else "query"."""
    content_type = headers.get("content-type", "")
    if "x-amz-target" in headers or content_type.startswith("application/x-amz-json"):
        return "json"
    return "query"


def answer_format(headers: Mapping[str, str]) -> str:
    """How to answer: "json" (the JSON protocol), "query-json" (a query request that
    accepts JSON: AWS answers the XML document's shape in JSON) or "xml"."""
    if detect_protocol(headers) == "json":
        return "json"
    return "query-json" if "application/json" in headers.get("accept", "") else "xml"


async def read_bounded(
    chunks: AsyncIterable[bytes], content_length: str | None, limit: int
) -> bytes:
    """The whole body, refusing (RequestEntityTooLarge) one longer than `limit` bytes:
    by its declared Content-Length before reading anything, and by counting while it
    streams, so a chunked or lying request cannot make us buffer more than `limit`."""
    read_declared(content_length, limit)
    body = bytearray()
    async for chunk in chunks:
        body += chunk
        if len(body) > limit:
            raise body_too_large(limit)
    return bytes(body)


def read_declared(content_length: str | None, limit: int) -> None:
    """Refuse (RequestEntityTooLarge) a body whose declared Content-Length is over
    `limit`, before reading any of it."""
    declared = (content_length or "").strip()
    # Only ASCII digits are a length (int() also takes "²"-like digits and refuses
    # 4,300 of them); a length longer than 18 digits is over any limit without int().
    if declared.isascii() and declared.isdigit() and (
        len(declared) > 18 or int(declared) > limit
    ):
        raise body_too_large(limit)


def body_limit(headers: Mapping[str, str], max_body_bytes: int) -> int:
    """How long a body the request may have: `max_body_bytes`, and no more than
    MAX_QUERY_BODY_BYTES in the query protocol."""
    if detect_protocol(headers) == "json":
        return max_body_bytes
    return min(max_body_bytes, MAX_QUERY_BODY_BYTES)


def body_too_large(limit: int) -> SqsError:
    return SqsError("RequestEntityTooLarge", f"Request body must be at most {limit} bytes.")


def decode_json(target: str | None, body: bytes) -> tuple[str, dict[str, Any]]:
    """(action, params) of a JSON-protocol request. The action is not checked against
    the known ones here (see `unknown_action`); the body must be a JSON object (an empty
    body counts as `{}`)."""
    match = _TARGET.fullmatch(target or "")
    if match is None:
        raise SqsError(
            "InvalidAction",
            f"The target {target or ''!r} is not an operation of AmazonSQS (expected "
            "X-Amz-Target: AmazonSQS.<Action>).",
        )
    if not body.strip():
        return match.group(1), {}
    try:
        params = jsoncodec.loads(body)
    except (UnicodeDecodeError, ValueError, RecursionError):
        # RecursionError: nested past the parser's reach (~1,000 levels), which no SQS
        # request is; refused as the malformed body it is.
        raise SqsError("SerializationException", "The request body is not valid JSON.") from None
    if not isinstance(params, dict):
        raise SqsError("SerializationException", "The request body must be a JSON object.")
    return match.group(1), params


def decode_query(
    method: str, query_string: bytes, body: bytes, *, on_queue_path: bool
) -> tuple[str, dict[str, Any]]:
    """(action, params) of a query-protocol request. Parameters come from the query
    string and, for a POST, the form body (which wins on a clash)."""
    fields = forms.form_fields(query_string)
    if method == "POST":
        fields.update(forms.form_fields(body))
    action = fields.get("Action")
    if not action:
        raise _no_action(method, on_queue_path)
    members = INPUTS.get(action)
    if members is None:
        raise unknown_action(action)
    return action, _members(members, _field_tree(fields))


def check_endpoint(action: str, path_queue: QueueKey | None) -> None:
    """AWS refuses service-level actions sent to a queue's URL (InvalidAction)."""
    if path_queue is not None and action in _SERVICE_ACTIONS:
        raise unknown_action(action)


def unknown_action(action: str) -> SqsError:
    return SqsError("InvalidAction", f"The action {action} is not valid for this endpoint.")


def _no_action(method: str, on_queue_path: bool) -> SqsError:
    # AWS: a bare GET (of / or of a queue URL) is an unknown operation (404); a POST
    # without Action lacks a parameter.
    if method == "GET" or on_queue_path:
        return SqsError("UnknownOperationException", "An unknown operation was requested.")
    return SqsError("MissingParameter", "The request must contain the parameter Action.")


@dataclass(slots=True)
class _Field:
    """One dotted segment of the query fields' names: `Attribute.1.Name=x` is the
    `Name` child (value x) of the `1` child of the `Attribute` child of the root."""

    value: str | None = None
    children: dict[str, _Field] = field(default_factory=dict)


def _field_tree(fields: Mapping[str, str]) -> _Field:
    # Built once, in time linear in the names' length: every list and structure is
    # then found by lookup, not by scanning every field again (which was quadratic).
    root = _Field()
    for name, value in fields.items():
        node = root
        for segment in name.split("."):
            child = node.children.get(segment)
            if child is None:
                child = node.children[segment] = _Field()
            node = child
        node.value = value
    return root


def _members(members: Mapping[str, tuple[str, Any]], node: _Field) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for member, (name, shape) in members.items():
        child = node.children.get(name)
        if child is not None:
            value = _node(shape, child, name)
            if value is not _ABSENT:
                out[member] = value
    return out


def _node(shape: Any, node: _Field, name: str) -> Any:
    if isinstance(shape, str):
        return _ABSENT if node.value is None else node.value
    if "structure" in shape:
        return _members(shape["structure"], node) if node.children else _ABSENT
    if "list" in shape:
        entries = _entries(shape, node, "member", name)
        if not entries:
            return _ABSENT
        return [_element(shape["list"], entry, name) for entry in entries]
    return _map(shape, node, name)


def _element(shape: Any, node: _Field | None, name: str) -> Any:
    value = _ABSENT if node is None else _node(shape, node, name)
    return ("" if isinstance(shape, str) else {}) if value is _ABSENT else value


def _map(shape: dict[str, Any], node: _Field, name: str) -> Any:
    entries = _entries(shape, node, "entry", name)
    if not entries:
        return _ABSENT
    out: dict[str, Any] = {}
    for entry in entries:
        key = entry.children.get(shape["key"])
        if key is None or key.value is None:  # an entry without its name: dropped
            continue
        out[key.value] = _element(shape["map"], entry.children.get(shape["value"]), name)
    return out


def _entries(shape: dict[str, Any], node: _Field, wrapper: str, name: str) -> list[_Field]:
    """The `N` children of a list's or map's node (under its `member`/`entry` level
    when it is not flattened), in numeric order, refused if there are more than
    `_cap(name)` -- before any of them is decoded."""
    if wrapper in shape:
        node = node.children.get(shape[wrapper]) or _Field()
    indexed = [(int(segment), child) for segment, child in node.children.items()
               if _is_index(segment)]
    limit, error = _cap(name)
    if len(indexed) > limit:
        raise error(len(indexed))
    return [child for _, child in sorted(indexed, key=lambda pair: pair[0])]


def _is_index(segment: str) -> bool:
    # Only `N` as a client writes it: ASCII digits without leading zeros, short enough
    # for int() (whose 4,300-digit limit and non-ASCII digits like "²" are refusals).
    return (
        0 < len(segment) <= 9 and segment.isascii() and segment.isdigit()
        and (segment[0] != "0" or segment == "0")
    )


def _cap(name: str) -> tuple[int, Callable[[int], SqsError]]:
    """How many entries the list or map `name` may have in one request, and the error
    beyond it: AWS's own limits where it has them, else a bound well above any real use."""
    if name.endswith("BatchRequestEntry"):
        return limits.MAX_BATCH_ENTRIES, _too_many_entries
    if name == "MessageAttribute":
        return limits.MAX_MESSAGE_ATTRIBUTES, _too_many_attributes
    if name == "Tag":
        return limits.MAX_TAGS_PER_QUEUE, _too_many_tags
    return _MAX_LIST_ENTRIES, lambda count: _too_many_values(name, count)


# Lists with no AWS limit of their own (AttributeName.N, TagKey.N, AWSAccountId.N, ...):
# there are about 30 attribute names, and a policy takes at most 50 principals.
_MAX_LIST_ENTRIES = 100


def _too_many_entries(count: int) -> SqsError:
    return errors.from_core(core_errors.TooManyEntries(count, limits.MAX_BATCH_ENTRIES))


def _too_many_attributes(count: int) -> SqsError:
    return errors.from_core(messages.too_many_attributes(count))


def _too_many_tags(count: int) -> SqsError:
    return errors.from_core(queues.too_many_tags(count))


def _too_many_values(name: str, count: int) -> SqsError:
    return SqsError(
        "InvalidParameterValue",
        f"A request can have at most {_MAX_LIST_ENTRIES} {name}.N parameters, not {count}.",
    )
