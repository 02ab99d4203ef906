"""Normalisation: what may differ between two correct servers is replaced by placeholders.

Replaced: message ids and receipt handles (by numbered placeholders, `<MessageId#1>`,
numbered in order of first appearance, so "the same message" still compares equal),
FIFO sequence numbers, request ids, timestamps, the sender id, and the host, port and
account of queue URLs and ARNs; JSON-valued attributes (Policy, RedrivePolicy,
RedriveAllowPolicy) are re-spelled compactly, so they compare as JSON. Kept as they
are: everything else — MD5 digests above
all, which must be byte-exact on every server.

Receive order is best effort on AWS, and list order of ListQueues is unspecified, so
`Messages` are sorted by body, `QueueUrls` and batch `Successful`/`Failed` by value/Id.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

# Keys whose values are identities of one server's making: numbered placeholders.
NUMBERED = ("MessageId", "ReceiptHandle", "SequenceNumber", "TaskHandle")
# Keys whose values are the server's clock or identity: one fixed placeholder.
FIXED = {
    "SentTimestamp": "<timestamp>",
    "ApproximateFirstReceiveTimestamp": "<timestamp>",
    "CreatedTimestamp": "<timestamp>",
    "LastModifiedTimestamp": "<timestamp>",
    "SenderId": "<SenderId>",
    "RequestId": "<RequestId>",
    "NextToken": "<NextToken>",  # opaque, of the server's making
    "StartedTimestamp": "<timestamp>",  # a move task's, a number in JSON
}
# Attributes whose value is a JSON document: compared as JSON, not as spelled (spaces).
JSON_VALUED = ("Policy", "RedrivePolicy", "RedriveAllowPolicy")
_URL = re.compile(r"https?://[^/\s\"'<>]+/\d{12}/")
_ARN = re.compile(r"arn:aws:(sqs|sns):[a-z0-9-]+:\d{12}:")
# An SNS subscription ARN ends in an id of the server's making.
_SUBSCRIPTION = re.compile(r"(arn:aws:sns:[^\s\"']+):[0-9a-f]{8}-[0-9a-f-]{27}")
_BARE_ENDPOINT = re.compile(r"^https?://[^/\s]+/?$")


def normalise(answers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A normalised copy of one scenario's answers (the input is not changed)."""
    numbers: dict[str, dict[str, str]] = {key: {} for key in NUMBERED}
    ordered = [_ordered(_plain(answer)) for answer in answers]
    for answer in ordered:
        _collect(answer, numbers)
    known = {value: placeholder for table in numbers.values() for value, placeholder in
             table.items()}
    return [_replace(answer, known) for answer in ordered]


def _plain(value: Any) -> Any:
    # bytes (a BinaryValue) as base64 text, so answers print and compare as text
    if isinstance(value, bytes):
        return "b64:" + base64.b64encode(value).decode("ascii")
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if k != "params"} | (
            {"params": value["params"]} if "params" in value else {}
        )
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _ordered(value: Any) -> Any:
    if isinstance(value, dict):
        out = {k: _ordered(_keyed(k, v)) for k, v in value.items()}
        for key in ("Messages", "Message"):
            if isinstance(out.get(key), list):
                out[key] = sorted(out[key], key=lambda m: str(m.get("Body", "")))
        for key in ("Successful", "Failed"):
            if isinstance(out.get(key), list):
                out[key] = sorted(out[key], key=lambda e: str(e.get("Id", "")))
        for key in ("QueueUrls", "QueueUrl"):
            if isinstance(out.get(key), list):
                out[key] = sorted(out[key], key=str)
        return out
    if isinstance(value, list):
        return [_ordered(v) for v in value]
    return value


# The query protocol's maps are repeated <Name/><Value/> (or <Key/><Value/>) elements, in
# no specified order: as a dict keyed by name they compare field by field, as in JSON.
_QUERY_MAPS = {"Attribute": "Name", "MessageAttribute": "Name", "Tag": "Key"}


def _keyed(key: str, value: Any) -> Any:
    name = _QUERY_MAPS.get(key)
    entries = [value] if isinstance(value, dict) else value
    if name is None or not isinstance(entries, list):
        return value
    if not all(isinstance(e, dict) and set(e) == {name, "Value"} for e in entries):
        return value
    return {str(e[name]): e["Value"] for e in entries}


def _collect(value: Any, numbers: dict[str, dict[str, str]]) -> None:
    """Number every id and handle in order of first appearance (not under params)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "params":
                continue
            if key in numbers and isinstance(item, str):
                table = numbers[key]
                table.setdefault(item, f"<{key}#{len(table) + 1}>")
            else:
                _collect(item, numbers)
    elif isinstance(value, list):
        for item in value:
            _collect(item, numbers)


def _replace(value: Any, known: dict[str, str], key: str | None = None) -> Any:
    if isinstance(value, dict):
        return {k: _replace(v, known, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace(v, known, key) for v in value]
    if key in FIXED:
        return FIXED[key]
    if not isinstance(value, str):
        return value
    if key in JSON_VALUED:
        value = _compact_json(value)
    # a short value ("2") is an id only where the key says so, not a count elsewhere
    if value in known and (key in NUMBERED or len(value) >= 8):
        return known[value]
    return normalise_text(value, known)


def _compact_json(text: str) -> str:
    try:
        return json.dumps(json.loads(text), separators=(",", ":"), ensure_ascii=False)
    except ValueError:
        return text


def normalise_text(text: str, known: dict[str, str] | None = None) -> str:
    """Host, port and account out of URLs and ARNs; known ids and handles inside text
    (an error message that quotes a receipt handle)."""
    text = _URL.sub("<endpoint>/<account>/", text)
    text = _ARN.sub(r"arn:aws:\1:<region>:<account>:", text)
    text = _SUBSCRIPTION.sub(r"\1:<subscription>", text)
    text = _BARE_ENDPOINT.sub("<endpoint>", text)
    for raw, placeholder in (known or {}).items():
        if len(raw) >= 8 and raw in text:
            text = text.replace(raw, placeholder)
    return text
