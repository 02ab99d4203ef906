"""The direct path (hopper/direct.py): SQS calls answered from uvicorn's protocol with
no ASGI cycle. Its behaviour is the ASGI path's, pinned by the rest of tests/server,
which runs on it; here, what only it could get wrong (pipelined calls, a call mixed
with a Starlette route on one connection, the answer in one piece), and the guard on
the uvicorn internals it leans on."""

from __future__ import annotations

import hashlib
import inspect
import json
import socket
import tempfile
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from hopper import serving
from hopper.app import create_app
from hopper.direct import DirectProtocol, endpoint_of, route_of
from hopper.settings import load

from .processes import start_hopper

# The uvicorn release hopper pins (pyproject.toml) and the source of each method of its
# httptools protocol that the direct path relies on or stands beside: a new release
# that changes any of them must be read against hopper/direct.py before the pin moves.
UVICORN = "0.55.0"
RELIED_ON = {
    "__init__": "4f08999410347141",  # the attributes read: cycle, pipeline, tasks, ...
    "connection_made": "6efb565ff3d36b91",
    "connection_lost": "c91a4c9bf2e29c55",  # cycle.disconnected, cycle.message_event.set()
    "data_received": "010a7ae59a5d3b1a",
    "on_message_begin": "96d377fdc7c2baef",  # resets url and headers per request
    "on_url": "37be44e962b04ca8",
    "on_header": "1e86ebb6cea0458c",  # lower-cased names, expect_100_continue
    "on_headers_complete": "1ea8589acfad92d8",  # pipelining behind cycle.response_complete
    "on_body": "dba9c32aeba35b6a",
    "on_message_complete": "1fbad42dc31fc01f",
    "on_response_complete": "64e254f28e389e76",  # the next pipelined cycle, keep-alive
    "shutdown": "d7351fa33f00d430",  # cycle.keep_alive = False
    "timeout_keep_alive_handler": "8b53bf5f2e202970",
}


def test_uvicorn_is_the_pinned_release_whose_internals_the_direct_path_was_written_for():
    assert version("uvicorn") == UVICORN, (
        f"uvicorn {version('uvicorn')} is installed, hopper/direct.py was written for "
        f"{UVICORN}: re-read its assumptions, then move the pin and RELIED_ON together"
    )
    changed = {
        name: digest
        for name, digest in RELIED_ON.items()
        if _digest(getattr(HttpToolsProtocol, name)) != digest
    }
    assert not changed, (
        f"uvicorn's HttpToolsProtocol changed in {sorted(changed)}: hopper/direct.py "
        "leans on these (see its docstring); re-read them, then update RELIED_ON"
    )


def test_hopper_serves_sqs_calls_on_the_direct_path_through_its_own_wrappers():
    # What `hopper serve` hands uvicorn, loaded as uvicorn loads it. A new wrapper
    # around the app turns the direct path off (it could be a check the direct path
    # would skip): such a wrapper's work belongs in endpoint.Endpoint, which both paths
    # run, or it must say it passes SQS calls through (`sqs_inner`).
    app = serving.refusing_in_one_line(create_app(load({}, environ={})), lambda _: None)
    config = uvicorn.Config(app, http=DirectProtocol, lifespan="off")
    config.load()
    route = route_of(config.loaded_app)
    assert route is not None
    _, checks = route
    assert len(checks) == 1  # the browsers' (hopper/browsers.py), run by the direct path too


def test_a_wrapper_that_does_not_say_it_passes_sqs_calls_through_turns_the_path_off():
    inner = create_app(load({}, environ={}))
    assert endpoint_of(inner) is not None

    async def guard(scope, receive, send):  # a check of its own, then the app
        await inner(scope, receive, send)

    guard.__wrapped__ = inner  # (functools.wraps says nothing about what passes)
    assert endpoint_of(guard) is None


def test_the_direct_protocol_overrides_only_what_it_stands_in_for():
    own = {name for name in vars(DirectProtocol) if not name.startswith("__")}
    assert own == {
        "endpoint", "checks", "connection_made", "on_message_begin",
        "on_headers_complete", "on_body", "on_message_complete", "_exchange",
        "_asgi_scope", "_answer", "_write", "_responded",
    }


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with tempfile.TemporaryDirectory() as scratch:
        process = start_hopper("--relaxed-timing", log=Path(scratch) / "hopper.log")
        try:
            yield process.url
        finally:
            assert process.stop() == 0, process.output()


def _call(host: str, action: str, payload: dict[str, object]) -> bytes:
    body = json.dumps(payload).encode()
    return (
        f"POST / HTTP/1.1\r\nHost: {host}\r\nX-Amz-Target: AmazonSQS.{action}\r\n"
        f"Content-Type: application/x-amz-json-1.0\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body


def _answers(sock: socket.socket, count: int) -> list[tuple[bytes, bytes]]:
    """`count` answers (head, body) read from `sock` in order."""
    buffered, found = b"", []
    while len(found) < count:
        while b"\r\n\r\n" not in buffered:
            buffered += sock.recv(65536)
        head, _, buffered = buffered.partition(b"\r\n\r\n")
        length = next(
            int(line.split(b":")[1]) for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        while len(buffered) < length:
            buffered += sock.recv(65536)
        found.append((head, buffered[:length]))
        buffered = buffered[length:]
    return found


@pytest.mark.slow
def test_pipelined_calls_are_answered_in_the_order_they_came(server):
    parts = urlsplit(server)
    host = parts.netloc
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        sock.sendall(_call(host, "CreateQueue", {"QueueName": "pipelined"}))
        (_, created), = _answers(sock, 1)
        url = json.loads(created)["QueueUrl"]
        # Three calls and a Starlette route in one write: answered in that order.
        sock.sendall(
            _call(host, "SendMessage", {"QueueUrl": url, "MessageBody": "one"})
            + b"GET /health HTTP/1.1\r\nHost: " + host.encode() + b"\r\n\r\n"
            + _call(host, "SendMessage", {"QueueUrl": url, "MessageBody": "two"})
            + _call(host, "GetQueueAttributes",
                    {"QueueUrl": url, "AttributeNames": ["ApproximateNumberOfMessages"]})
        )
        answers = _answers(sock, 4)
    assert [head.split(b"\r\n")[0] for head, _ in answers] == [b"HTTP/1.1 200 OK"] * 4
    assert "MessageId" in json.loads(answers[0][1])
    assert json.loads(answers[1][1]) == {"status": "ok"}
    assert "MessageId" in json.loads(answers[2][1])
    attributes = json.loads(answers[3][1])["Attributes"]
    assert attributes["ApproximateNumberOfMessages"] == "2"


@pytest.mark.slow
def test_an_http_1_0_call_is_answered_and_the_connection_closed(server):
    parts = urlsplit(server)
    request = _call(parts.netloc, "ListQueues", {}).replace(b"HTTP/1.1", b"HTTP/1.0", 1)
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        sock.sendall(request)
        (head, body), = _answers(sock, 1)
        assert sock.recv(65536) == b""  # closed after the answer
    assert b"connection: close" in head.lower()
    assert "QueueUrls" in json.loads(body) or json.loads(body) == {}


def _digest(function: object) -> str:
    return hashlib.sha256(inspect.getsource(function).encode()).hexdigest()[:16]  # type: ignore[arg-type]
