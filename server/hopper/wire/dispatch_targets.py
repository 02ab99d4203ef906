"""Hopper.Dispatch as the wire spells it (a hopper extension queue attribute).

`{"url": "http://127.0.0.1:9000/2015-03-31/functions/function/invocations",
"batchSize": 10, "batchWindowSeconds": 0, "maxConcurrency": 2, "timeoutSeconds": 30,
"payload": "lambda", "paused": false}`; only `url` is required. Read like RedrivePolicy,
refused as AWS refuses a bad one (InvalidParameterValue, the text quoted, a reason);
an empty text removes the target. Which hosts it may name is the core's rule
(core/dispatch_hosts.py).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from hopper.core import dispatch_targets as targets
from hopper.core.dispatch_targets import PAYLOADS, DispatchTarget
from hopper.wire.attribute_names import DISPATCH
from hopper.wire.errors import SqsError, invalid_parameter_value
from hopper.wire.redrive_policies import json_document

# member -> (DispatchTarget field, low, high) for the numbers
_NUMBERS: dict[str, tuple[str, float, float]] = {
    "batchSize": ("batch_size", 1, targets.MAX_BATCH_SIZE),
    "batchWindowSeconds": ("batch_window", 0, targets.MAX_BATCH_WINDOW_SECONDS),
    "maxConcurrency": ("max_concurrency", 1, targets.MAX_CONCURRENCY),
    "timeoutSeconds": ("timeout", 0.001, targets.MAX_TIMEOUT_SECONDS),
}
_WHOLE = ("batchSize", "maxConcurrency")
_MEMBERS = ("url", *_NUMBERS, "payload", "paused")


def parse_dispatch(name: str, text: str) -> DispatchTarget | None:
    if text.strip() == "":
        return None
    document = json_document(text)
    if not isinstance(document, dict):
        raise _error(text, "Dispatch target is not a valid JSON map.")
    for member in document:
        if member not in _MEMBERS:
            raise _error(text, f"Unknown member {member}; known: {', '.join(_MEMBERS)}.")
    values: dict[str, Any] = {"url": _url(text, document.get("url"))}
    for member, (field, low, high) in _NUMBERS.items():
        if member in document:
            values[field] = _number(text, member, document[member], low, high)
    payload = document.get("payload", "lambda")
    if payload not in PAYLOADS:
        raise _error(text, f"Invalid value for payload: {payload}, valid values are lambda, raw.")
    paused = document.get("paused", False)
    if not isinstance(paused, bool):
        raise _error(text, f"Invalid value for paused: {paused}, valid values are true, false.")
    return DispatchTarget(**values, payload=payload, paused=paused)


def _url(text: str, url: Any) -> str:
    if url is None:
        raise _error(text, "Dispatch target does not contain mandatory attribute: url.")
    parts = urlsplit(url) if isinstance(url, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise _error(text, f"Invalid value for url: {url}, an http:// or https:// URL.")
    return str(url)


def _number(text: str, member: str, value: Any, low: float, high: float) -> Any:
    number: float | None = None
    if isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
    whole = member not in _WHOLE or (number is not None and number == int(number))
    if number is None or not whole or not low <= number <= high:
        raise _error(
            text,
            f"Invalid value for {member}: {value}, valid values are from {low:g} to {high:g}"
            " both inclusive.",
        )
    return int(number) if member in _WHOLE else number


def _error(text: str, reason: str) -> SqsError:
    return invalid_parameter_value(DISPATCH, text, reason)


def dispatch_text(target: DispatchTarget) -> str:
    return json.dumps(
        {
            "url": target.url,
            "batchSize": target.batch_size,
            "batchWindowSeconds": _seconds(target.batch_window),
            "maxConcurrency": target.max_concurrency,
            "timeoutSeconds": _seconds(target.timeout),
            "payload": target.payload,
            "paused": target.paused,
        },
        separators=(",", ":"),
    )


def _seconds(seconds: float) -> float | int:
    return int(seconds) if seconds == int(seconds) else seconds
