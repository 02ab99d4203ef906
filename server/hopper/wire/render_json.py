"""Responses of the JSON protocol (`application/x-amz-json-1.0`).

Results are already in the JSON shape; the only translation is `bytes` (BinaryValue)
to base64 text. Errors carry `__type` and, for botocore's query-compatible error
mapping, `x-amzn-query-error: <query code>;<Sender|Receiver>`.
"""

from __future__ import annotations

import base64
import json
from dataclasses import field
from typing import Any

from hopper import jsoncodec
from hopper.core.model import value
from hopper.wire.errors import SqsError

CONTENT_TYPE = "application/x-amz-json-1.0"


@value
class Rendered:
    """An encoded response, independent of the web framework that sends it."""

    status: int
    content_type: str
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


def render_result(result: dict[str, Any], request_id: str) -> Rendered:
    body = jsoncodec.dumps(result, default=_encode)
    return Rendered(200, CONTENT_TYPE, body, {"x-amzn-RequestId": request_id})


def render_error(error: SqsError, request_id: str) -> Rendered:
    code = error.code
    body = json.dumps({"__type": code.json_type, "message": error.text_for("json")}).encode()
    fault = "Sender" if code.sender else "Receiver"
    headers = {"x-amzn-query-error": f"{code.query_code};{fault}", "x-amzn-RequestId": request_id}
    return Rendered(code.status, CONTENT_TYPE, body, headers)


def _encode(value: Any) -> Any:
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode("ascii")
    raise TypeError(f"cannot encode {type(value).__name__} as JSON")
