"""Which SQS protocol a request speaks, and its (action, params) in the JSON shape.

Two protocols reach one set of handlers. The JSON protocol names its action in
`X-Amz-Target: AmazonSQS.<Action>` and sends the parameters as a JSON object, already
in the shape handlers take. The query protocol sends `Action=<Action>` and flattened
parameters (`Attribute.1.Name=...`) form-encoded in a POST body or a GET query string;
`decode_query` rebuilds the JSON shape from the names in `shapes.INPUTS`, leaving
scalars as the strings they arrived as.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterable, Mapping
from typing import Any
from urllib.parse import parse_qsl

from hopper.core.model import QueueKey
from hopper.wire.errors import SqsError
from hopper.wire.shapes import INPUTS

JSON_CONTENT_TYPE = "application/x-amz-json-1.0"
_TARGET = re.compile(r"AmazonSQS\.(\w+)")
# Actions that make sense only against the service endpoint, never a queue's URL
# (AWS answers GetQueueUrl on a queue URL: it names its queue by QueueName anyway).
_SERVICE_ACTIONS = frozenset({"CreateQueue", "ListQueues"})
_ABSENT: Any = object()


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
    declared = (content_length or "").strip()
    if declared.isdigit() and int(declared) > limit:
        raise body_too_large(limit)
    body = bytearray()
    async for chunk in chunks:
        body += chunk
        if len(body) > limit:
            raise body_too_large(limit)
    return bytes(body)


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
        params = json.loads(body)
    except (UnicodeDecodeError, ValueError):
        raise SqsError("SerializationException", "The request body is not valid JSON.") from None
    if not isinstance(params, dict):
        raise SqsError("SerializationException", "The request body must be a JSON object.")
    return match.group(1), params


def decode_query(
    method: str, query_string: bytes, body: bytes, *, on_queue_path: bool
) -> tuple[str, dict[str, Any]]:
    """(action, params) of a query-protocol request. Parameters come from the query
    string and, for a POST, the form body (which wins on a clash)."""
    fields = _form_fields(query_string)
    if method == "POST":
        fields.update(_form_fields(body))
    action = fields.get("Action")
    if not action:
        raise _no_action(method, on_queue_path)
    members = INPUTS.get(action)
    if members is None:
        raise unknown_action(action)
    return action, _members(members, fields, "")


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


def _form_fields(data: bytes) -> dict[str, str]:
    try:
        pairs = parse_qsl(data.decode("utf-8"), keep_blank_values=True, errors="strict")
    except UnicodeDecodeError:
        raise SqsError(
            "SerializationException", "The request is not a valid UTF-8 form encoding."
        ) from None
    return dict(pairs)


def _members(
    members: Mapping[str, tuple[str, Any]], fields: Mapping[str, str], prefix: str
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for member, (name, node) in members.items():
        value = _node(node, fields, prefix + name)
        if value is not _ABSENT:
            out[member] = value
    return out


def _node(node: Any, fields: Mapping[str, str], key: str) -> Any:
    if isinstance(node, str):
        return fields.get(key, _ABSENT)
    if "structure" in node:
        if not any(name.startswith(key + ".") for name in fields):
            return _ABSENT
        return _members(node["structure"], fields, key + ".")
    if "list" in node:
        base = f"{key}.{node['member']}" if "member" in node else key
        indices = _indices(fields, base)
        if not indices:
            return _ABSENT
        return [_list_element(node["list"], fields, f"{base}.{i}") for i in indices]
    return _map(node, fields, key)


def _list_element(node: Any, fields: Mapping[str, str], key: str) -> Any:
    value = _node(node, fields, key)
    return ("" if isinstance(node, str) else {}) if value is _ABSENT else value


def _map(node: dict[str, Any], fields: Mapping[str, str], key: str) -> Any:
    base = f"{key}.{node['entry']}" if "entry" in node else key
    indices = _indices(fields, base)
    if not indices:
        return _ABSENT
    out: dict[str, Any] = {}
    for i in indices:
        name = fields.get(f"{base}.{i}.{node['key']}")
        if name is None:  # an entry without its name has nowhere to go: dropped
            continue
        out[name] = _list_element(node["map"], fields, f"{base}.{i}.{node['value']}")
    return out


def _indices(fields: Mapping[str, str], base: str) -> list[int]:
    """The N of every `base.N` or `base.N.*` field, in numeric order."""
    start = base + "."
    found: set[int] = set()
    for name in fields:
        if name.startswith(start):
            head = name[len(start):].split(".", 1)[0]
            if head.isdigit():
                found.add(int(head))
    return sorted(found)
