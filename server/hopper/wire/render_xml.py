"""Responses of the query protocol: `text/xml` in the 2012-11-05 namespace.

A result in the JSON shape is laid out by the action's tree in `shapes.OUTPUTS`:
flattened lists repeat their element (`<Message>`, `<QueueUrl>`), maps become
`<Attribute><Name/><Value/></Attribute>`-style entries, booleans are `true`/`false` and
`bytes` are base64. Members the tree does not name are not rendered.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

import xmltodict  # type: ignore[import-untyped]

from hopper.wire.errors import SqsError
from hopper.wire.render_json import Rendered
from hopper.wire.shapes import OUTPUTS

NAMESPACE = "http://queue.amazonaws.com/doc/2012-11-05/"
CONTENT_TYPE = "text/xml"


def render_result(action: str, result: Mapping[str, Any], request_id: str) -> Rendered:
    """`<{action}Response>` with a `<{action}Result>`, except for actions that have no
    output: AWS sends only ResponseMetadata for those."""
    response: dict[str, Any] = {"@xmlns": NAMESPACE}
    members = OUTPUTS.get(action)
    if members is not None:
        response[f"{action}Result"] = _members(members, result) or None
    response["ResponseMetadata"] = {"RequestId": request_id}
    return _document({f"{action}Response": response}, 200, request_id)


# AWS answers a request that names no operation with this bare element as the whole
# body (404), whatever the client accepts.
UNKNOWN_OPERATION = b"<UnknownOperationException/>"


def render_error(error: SqsError, request_id: str) -> Rendered:
    code = error.code
    if error.name == "UnknownOperationException":
        headers = {"x-amzn-RequestId": request_id}
        return Rendered(code.status, CONTENT_TYPE, UNKNOWN_OPERATION, headers)
    detail = {
        "Type": "Sender" if code.sender else "Receiver",
        "Code": code.query_code,
        "Message": error.text_for("query"),
        "Detail": None,
    }
    document = {"ErrorResponse": {"@xmlns": NAMESPACE, "Error": detail, "RequestId": request_id}}
    return _document(document, code.status, request_id)


def _document(tree: dict[str, Any], status: int, request_id: str) -> Rendered:
    text = xmltodict.unparse(tree, short_empty_elements=True)
    # XML parsers turn a literal CR into LF; AWS sends it as a character reference so
    # message bodies (and their MD5s) survive. Markup itself never contains a CR here.
    text = text.replace("\r", "&#xD;")
    return Rendered(status, CONTENT_TYPE, text.encode("utf-8"), {"x-amzn-RequestId": request_id})


def _members(members: Mapping[str, tuple[str, Any]], value: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for member, (name, node) in members.items():
        if member in value and value[member] is not None:
            out[name] = _node(node, value[member])
    return out


def _node(node: Any, value: Any) -> Any:
    if isinstance(node, str):
        return _scalar(value)
    if "structure" in node:
        return _members(node["structure"], value) or None
    if "list" in node:
        items = [_node(node["list"], item) for item in value]
        return {node["member"]: items} if "member" in node else items
    entries = [
        {node["key"]: _scalar(key), node["value"]: _node(node["map"], item)}
        for key, item in value.items()
    ]
    return {node["entry"]: entries} if "entry" in node else entries


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode("ascii")
    return str(value)
