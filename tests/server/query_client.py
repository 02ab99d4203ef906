"""A small client for the SQS query protocol, for tests against a live hopper.

boto3 only speaks JSON to SQS nowadays, so this is how tests reach the query protocol:
form-encoded `Action=...&Version=2012-11-05&...` (POST body or GET query string),
signed with botocore's own SigV4 signer so the server sees a really signed request,
sent with httpx, the XML answer parsed with xmltodict.

Parameters are flat query names (`QueueName`, `Attribute.1.Name`); `flatten` builds
them from structured values:

    client.call("CreateQueue", {"QueueName": "q", **flatten("Attribute", {"DelaySeconds": 5})})
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode, urlsplit
from xml.parsers.expat import ExpatError

import httpx
import xmltodict
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

API_VERSION = "2012-11-05"
FORM_CONTENT_TYPE = "application/x-www-form-urlencoded; charset=utf-8"

# A value in flatten: scalars, bytes (base64 as BinaryValue), lists and dicts of them.
Value = Any


@dataclass(frozen=True)
class Response:
    """One query-protocol answer: `xml` is the parsed body (None when it is not XML)."""

    action: str
    status: int
    headers: httpx.Headers
    text: str
    xml: dict[str, Any] | None

    @property
    def result(self) -> Any:
        """The `<{Action}Result>` element (None when absent, as for DeleteMessage)."""
        body = (self.xml or {}).get(f"{self.action}Response") or {}
        return body.get(f"{self.action}Result")

    @property
    def error(self) -> dict[str, Any] | None:
        """The `<Error>` element of an `<ErrorResponse>` (Type, Code, Message, Detail)."""
        body = (self.xml or {}).get("ErrorResponse") or {}
        error = body.get("Error")
        return error if isinstance(error, dict) else None

    @property
    def request_id(self) -> str | None:
        for envelope in (self.xml or {}).values():
            if isinstance(envelope, dict):
                metadata = envelope.get("ResponseMetadata") or envelope
                if "RequestId" in metadata:
                    return str(metadata["RequestId"])
        return None


class QueryClient:
    """Signs and sends SQS query-protocol requests to one endpoint. Use as a context
    manager (or call close) to release the connection pool."""

    def __init__(
        self,
        endpoint_url: str,
        region: str = "us-east-1",
        access_key: str = "test",
        secret_key: str = "test",
        *,
        timeout: float = 30.0,
    ) -> None:
        self.endpoint_url = endpoint_url.rstrip("/")
        self.region = region
        self.credentials = Credentials(access_key, secret_key)
        self.http = httpx.Client(timeout=timeout)

    def call(
        self,
        action: str,
        params: Mapping[str, str],
        *,
        method: str = "POST",
        path: str = "/",
        headers: Mapping[str, str] | None = None,
        signed: bool = True,
    ) -> Response:
        """Send `action` with flat `params`; never raises for an HTTP error status."""
        request = self.build(
            action, params, method=method, path=path, headers=headers, signed=signed
        )
        answer = self.http.send(request)
        return Response(
            action, answer.status_code, answer.headers, answer.text, parse_xml(answer.text)
        )

    def build(
        self,
        action: str,
        params: Mapping[str, str],
        *,
        method: str = "POST",
        path: str = "/",
        headers: Mapping[str, str] | None = None,
        signed: bool = True,
    ) -> httpx.Request:
        """The request `call` would send: POST carries the form in the body, GET in the
        query string. `path` may be a queue URL's path (or the whole queue URL)."""
        fields = {"Action": action, "Version": API_VERSION, **params}
        url = self.endpoint_url + (urlsplit(path).path or "/")
        extra = dict(headers or {})
        if method.upper() == "GET":
            # Percent-encoding (%20, not +): botocore signs the query string as given,
            # and SigV4's canonical form is RFC 3986 encoding.
            url += "?" + urlencode(fields, quote_via=quote, safe="-_.~")
            body = b""
        else:
            body = urlencode(fields).encode("utf-8")
            extra.setdefault("Content-Type", FORM_CONTENT_TYPE)
        prepared = AWSRequest(method=method.upper(), url=url, data=body, headers=extra)
        if signed:
            SigV4Auth(self.credentials, "sqs", self.region).add_auth(prepared)
        ready = prepared.prepare()
        return self.http.build_request(
            ready.method, ready.url, content=ready.body or b"", headers=dict(ready.headers)
        )

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> QueryClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def parse_xml(text: str) -> dict[str, Any] | None:
    """The body as xmltodict gives it, or None when it is empty or not XML."""
    if not text.lstrip().startswith("<"):
        return None
    try:
        return dict(xmltodict.parse(text))
    except ExpatError:
        return None


def flatten(prefix: str, value: Value) -> dict[str, str]:
    """Structured parameters in query form, as botocore's query serializer writes SQS's.

    - a scalar is one field (`True` -> "true"; bytes are base64, as BinaryValue is);
    - a list numbers its items from 1: `flatten("AttributeName", ["All"])` ->
      `AttributeName.1=All`; dict items are structures (batch entries):
      `SendMessageBatchRequestEntry.1.Id`, `SendMessageBatchRequestEntry.1.MessageBody`;
    - a dict is a map, numbered entries of name and value, as every SQS map is:
      `Attribute.1.Name`/`Attribute.1.Value`, `Tag.1.Key`/`Tag.1.Value` (the key is
      `Key` only for tags); a dict map value is a structure (a message attribute):
      `MessageAttribute.1.Value.DataType`, `MessageAttribute.1.Value.StringValue`.
      Inside a structure, a dict member is a map again (an entry's `MessageAttribute`).
    """
    if isinstance(value, Mapping):
        return _flatten_map(prefix, value)
    if isinstance(value, list | tuple):
        fields: dict[str, str] = {}
        for index, item in enumerate(value, start=1):
            fields.update(_flatten_member(f"{prefix}.{index}", item))
        return fields
    return {prefix: _scalar(value)}


def _flatten_map(prefix: str, mapping: Mapping[str, Value]) -> dict[str, str]:
    key_name = "Key" if prefix.rsplit(".", 1)[-1] == "Tag" else "Name"
    fields: dict[str, str] = {}
    for index, (key, item) in enumerate(mapping.items(), start=1):
        fields[f"{prefix}.{index}.{key_name}"] = key
        fields.update(_flatten_member(f"{prefix}.{index}.Value", item))
    return fields


def _flatten_member(prefix: str, value: Value) -> dict[str, str]:
    # A dict here is a structure: its members are named, not numbered.
    if not isinstance(value, Mapping):
        return flatten(prefix, value)
    fields: dict[str, str] = {}
    for member, item in value.items():
        fields.update(flatten(f"{prefix}.{member}", item))
    return fields


def _scalar(value: Value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    return str(value)


def listed(value: Any) -> list[Any]:
    """xmltodict gives one repeated element as a dict and several as a list, and none
    as absent: this gives a list in every case (for `result["Message"]` and the like)."""
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def path_of(queue_url: str) -> str:
    """The path of a queue URL (`/000000000000/name`), to call on the queue's endpoint."""
    return urlsplit(queue_url).path
