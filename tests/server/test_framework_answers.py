"""Requests no SQS action or hopper route serves get SQS's answer to an unknown
operation in the protocol they look like, never the web framework's text/plain."""

from __future__ import annotations

import json
import socket
from urllib.parse import urlsplit

import httpx
import pytest

from .query_client import parse_xml

JSON_HEADERS = {"x-amz-target": "AmazonSQS.ListQueues",
                "content-type": "application/x-amz-json-1.0"}
UNKNOWN = [
    ("POST", "//"),
    ("POST", "/a/b/c/d"),
    ("POST", "/us-east-1/000000000000/q/extra"),
    ("GET", "/000000000000/q/"),
    ("POST", "/health"),
    ("PUT", "/"),
    ("DELETE", "/000000000000/q"),
    ("PATCH", "/metrics"),
    ("OPTIONS", "/"),
]


def is_unknown_operation(xml: str) -> bool:
    """AWS answers an unknown operation with the bare root element."""
    return (parse_xml(xml) or {}).keys() == {"UnknownOperationException"}


@pytest.mark.parametrize(("method", "path"), UNKNOWN)
def test_an_unknown_method_or_path_is_an_unknown_operation_in_xml(endpoint, method, path):
    response = httpx.request(method, endpoint + path)
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/xml")
    assert is_unknown_operation(response.text)


@pytest.mark.parametrize(("method", "path"), UNKNOWN)
def test_an_unknown_method_or_path_is_an_unknown_operation_in_json(endpoint, method, path):
    response = httpx.request(method, endpoint + path, headers=JSON_HEADERS, content=b"{}")
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/x-amz-json-1.0"
    assert response.json()["__type"].endswith("#UnknownOperationException")
    assert response.headers["x-amzn-query-error"] == "UnknownOperationException;Sender"


def test_a_websocket_upgrade_is_answered_as_the_http_request_it_is(endpoint):
    response = httpx.get(endpoint + "/000000000000/q", headers={
        "connection": "Upgrade", "upgrade": "websocket", "sec-websocket-version": "13",
        "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
    })
    assert response.status_code == 404
    assert is_unknown_operation(response.text)


def raw_exchange(endpoint: str, head: bytes) -> tuple[bytes, bytes, bytes]:
    """Send `head` as it is; the status line, headers and body of the answer."""
    parts = urlsplit(endpoint)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as raw:
        raw.sendall(head)
        answer = b""
        while chunk := raw.recv(65536):
            answer += chunk
    status, _, rest = answer.partition(b"\r\n")
    headers, _, body = rest.partition(b"\r\n\r\n")
    return status, headers, body


def test_a_request_for_the_asterisk_is_an_unknown_operation(endpoint):
    status, _, body = raw_exchange(
        endpoint,
        b"POST * HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    )
    assert status.startswith(b"HTTP/1.1 404")
    assert is_unknown_operation(body.decode())


@pytest.mark.parametrize(
    ("head", "kind"),
    [
        (b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: many\r\n\r\n", "xml"),
        (b"POST / HTTP/1.1\r\nHost: localhost\r\nX-Amz-Target: AmazonSQS.ListQueues\r\n"
         b"Content-Length: many\r\n\r\n", "json"),
        (b"GARBAGE\r\n\r\n", "xml"),
    ],
)
def test_a_request_the_http_parser_cannot_read_gets_an_sqs_error(endpoint, head, kind):
    status, headers, body = raw_exchange(endpoint, head)
    assert status.startswith(b"HTTP/1.1 400")
    if kind == "json":
        assert b"content-type: application/x-amz-json-1.0" in headers
        assert json.loads(body)["__type"].endswith("#SerializationException")
    else:
        assert b"content-type: text/xml" in headers
        error = (parse_xml(body.decode()) or {})["ErrorResponse"]["Error"]
        assert error["Code"] == "MalformedQueryString"
