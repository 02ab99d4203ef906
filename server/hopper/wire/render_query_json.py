"""Responses of the query protocol to a client that asks for JSON (`Accept:
application/json`), as AWS gives them: the XML document's shape in JSON.

    {"ListQueuesResponse": {"ListQueuesResult": {"queueUrls": [...]},
                            "ResponseMetadata": {"RequestId": "..."}}}

AWS names list members in lower camel case (`queueUrls`, `messages`: a recorded
ReceiveMessage has its body at `ReceiveMessageResult.messages[0].Body`) and keeps the
other members' names; `bytes` (BinaryValue) are base64 text, as in the XML.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

from hopper.wire import render_xml
from hopper.wire.errors import SqsError
from hopper.wire.render_json import Rendered
from hopper.wire.shapes import OUTPUTS

CONTENT_TYPE = "application/json"


def render_result(action: str, result: Mapping[str, Any], request_id: str) -> Rendered:
    """`{"<action>Response": {"<action>Result": ..., "ResponseMetadata": ...}}`; actions
    without output have only the metadata, as in the XML."""
    response: dict[str, Any] = {}
    if action in OUTPUTS:
        response[f"{action}Result"] = _value(result)
    response["ResponseMetadata"] = {"RequestId": request_id}
    return _document({f"{action}Response": response}, 200, request_id)


def render_error(error: SqsError, request_id: str) -> Rendered:
    if error.name == "UnknownOperationException":
        return render_xml.render_error(error, request_id)  # AWS's bare XML element
    code = error.code
    detail = {
        "Type": "Sender" if code.sender else "Receiver",
        "Code": code.query_code,
        "Message": error.text_for("query"),
    }
    return _document(
        {"ErrorResponse": {"Error": detail, "RequestId": request_id}}, code.status, request_id
    )


def _document(tree: dict[str, Any], status: int, request_id: str) -> Rendered:
    body = json.dumps(tree, separators=(",", ":")).encode("utf-8")
    return Rendered(status, CONTENT_TYPE, body, {"x-amzn-RequestId": request_id})


def _value(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {_name(key, item): _value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_value(item) for item in value]
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode("ascii")
    return value


def _name(key: str, value: Any) -> str:
    return key[:1].lower() + key[1:] if isinstance(value, list | tuple) else key
