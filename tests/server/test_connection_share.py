"""One client address cannot lock everyone else out (issue 25, item 4): it holds at
most its share of `--max-connections` (half unless `--max-connections-per-address`
says), so while it holds all it may, another address is still served.

The two clients are two loopback addresses of this machine (127.0.0.1 and 127.0.0.2:
Linux routes all of 127/8 to lo). The in-memory store only: connections are the HTTP
layer's, the same whatever store sits behind it."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from .processes import HopperProcess, start_hopper

pytestmark = pytest.mark.slow

CAP = 20
HOG, OTHER = "127.0.0.1", "127.0.0.2"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[HopperProcess]:
    hopper = start_hopper("--max-connections", str(CAP), log=tmp_path / "hopper.log")
    try:
        yield hopper
    finally:
        assert hopper.stop() == 0, hopper.output()


def _connect(url: str, source: str) -> socket.socket:
    parts = urlsplit(url)
    return socket.create_connection((parts.hostname, parts.port), timeout=10,
                                    source_address=(source, 0))


REFUSED = b"HTTP/1.1 503 Service Unavailable"


def _ask(sock: socket.socket) -> bytes:
    """One keep-alive request for /health, and the first line of its answer. A refused
    connection was answered 503 and closed as it opened: the request may then meet
    the close (a reset that can take the 503 with it), which counts as refused."""
    try:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
        answer = b""
        while b"\r\n" not in answer:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    except (ConnectionResetError, BrokenPipeError):
        return REFUSED
    return answer.split(b"\r\n", 1)[0]


def test_one_address_holds_half_the_connections_and_another_is_still_served(server):
    with ExitStack() as sockets:
        # given one address trying to hold every connection the server takes
        hog = [sockets.enter_context(_connect(server.url, HOG)) for _ in range(CAP)]
        answers = [_ask(sock) for sock in hog]

        # then it got half of them, and was refused the rest
        assert answers.count(b"HTTP/1.1 200 OK") == CAP // 2, answers
        assert answers.count(REFUSED) == CAP // 2, answers

        # and another address is served, on connections of its own, while it holds them
        other = [sockets.enter_context(_connect(server.url, OTHER)) for _ in range(CAP // 2)]
        assert [_ask(sock) for sock in other] == [b"HTTP/1.1 200 OK"] * (CAP // 2)
    assert "127.0.0.1 holds 10 connections, its most (10)" in server.output()
