"""SNS's answers: `text/xml` in the 2010-03-31 namespace. A result is a tree in
xmltodict's shape, built by the handler with `members` (lists: `<member>` elements)
and `entries` (maps: `<entry><key/><value/></entry>`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import xmltodict  # type: ignore[import-untyped]

from hopper.wire.render_json import Rendered
from hopper.wire.sns.errors import SnsError

NAMESPACE = "http://sns.amazonaws.com/doc/2010-03-31/"
CONTENT_TYPE = "text/xml"


def result(action: str, tree: Mapping[str, Any] | None, request_id: str) -> Rendered:
    """`<{action}Response>`, with a `<{action}Result>` unless the action has no output
    (`tree` None)."""
    response: dict[str, Any] = {"@xmlns": NAMESPACE}
    if tree is not None:
        response[f"{action}Result"] = dict(tree) or None
    response["ResponseMetadata"] = {"RequestId": request_id}
    return _document({f"{action}Response": response}, 200, request_id)


def failure(error: SnsError, request_id: str) -> Rendered:
    detail = {
        "Type": "Sender" if error.sender else "Receiver",
        "Code": error.code,
        "Message": _printable(error.message),
    }
    tree = {"ErrorResponse": {"@xmlns": NAMESPACE, "Error": detail, "RequestId": request_id}}
    return _document(tree, error.status, request_id)


def members(items: Sequence[Any]) -> dict[str, Any] | None:
    return {"member": list(items)} if items else None


def entries(values: Mapping[str, str]) -> dict[str, Any] | None:
    items = [{"key": key, "value": value} for key, value in values.items()]
    return {"entry": items} if items else None


def _document(tree: dict[str, Any], status: int, request_id: str) -> Rendered:
    text = xmltodict.unparse(tree, short_empty_elements=True).replace("\r", "&#xD;")
    return Rendered(status, CONTENT_TYPE, text.encode("utf-8"), {"x-amzn-RequestId": request_id})


def _printable(text: str) -> str:
    # Texts quote input, and input may hold what XML 1.0 cannot carry.
    from hopper.core.characters import FORBIDDEN

    return FORBIDDEN.sub("\ufffd", text)
