"""Connection limits with real sockets against a live server: a connection that does
not deliver a whole request in time is closed, a long poll is not, and connections
beyond the cap are refused with a 503. (Memory store only: connections are the
HTTP layer's, the same whatever store sits behind it.)"""

from __future__ import annotations

import contextlib
import select
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from hopper.settings import load

from .processes import start_hopper

IDLE_TIMEOUT = 1
CAP = 5
SLACK = 3.0  # how late, past its deadline, a close may come on a loaded machine


@pytest.fixture(scope="module")
def impatient() -> Iterator[str]:
    """A server with a one-second idle timeout."""
    with tempfile.TemporaryDirectory() as scratch:
        server = start_hopper(
            "--idle-timeout", str(IDLE_TIMEOUT), log=Path(scratch) / "hopper.log"
        )
        try:
            yield server.url
        finally:
            assert server.stop() == 0, server.output()


def connect(url: str) -> socket.socket:
    parts = urlsplit(url)
    return socket.create_connection((parts.hostname, parts.port), timeout=30)


def seconds_until_closed(sock: socket.socket) -> float:
    """Read (and drop) whatever comes until the server closes the connection."""
    started = time.monotonic()
    while sock.recv(65536):
        pass
    return time.monotonic() - started


def request(sock: socket.socket, path: str = "/health") -> bytes:
    """One keep-alive request on `sock`, and the head and body of its answer."""
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
    answer = b""
    while b"\r\n\r\n" not in answer or not answer.endswith(b"}"):
        chunk = sock.recv(65536)
        assert chunk, f"closed after {answer!r}"
        answer += chunk
    return answer


def test_a_connection_that_never_sends_a_request_is_closed_after_the_idle_timeout(impatient):
    with connect(impatient) as silent:
        waited = seconds_until_closed(silent)
    assert IDLE_TIMEOUT * 0.9 <= waited < IDLE_TIMEOUT + SLACK


def test_a_request_that_trickles_in_a_byte_at_a_time_is_cut_off(impatient):
    head = b"GET /health HTTP/1.1\r\nHost: localhost\r\nX-Slow: " + b"a" * 100 + b"\r\n\r\n"
    with connect(impatient) as slow:
        slow.settimeout(0.1)  # one byte every tenth of a second: 13 s for the whole head
        started, cut_after = time.monotonic(), None
        for byte in head:
            try:
                slow.sendall(bytes([byte]))
                if slow.recv(1) == b"":
                    cut_after = time.monotonic() - started
                    break
            except TimeoutError:
                continue  # nothing to read yet: the server is still waiting for the head
            except OSError:  # reset: the server closed while a byte was on its way
                cut_after = time.monotonic() - started
                break
    assert cut_after is not None, "the server waited for the whole slow request"
    assert cut_after < IDLE_TIMEOUT + SLACK


def test_an_idle_keep_alive_connection_is_closed_after_its_answer_and_the_timeout(impatient):
    with connect(impatient) as client:
        assert request(client).startswith(b"HTTP/1.1 200")
        waited = seconds_until_closed(client)
    assert IDLE_TIMEOUT * 0.9 <= waited < IDLE_TIMEOUT + SLACK


def sqs_call(sock: socket.socket) -> bytes:
    """One ListQueues (an SQS call: the direct path, hopper/direct.py) on `sock`, and
    the head of its answer, whose body is read and dropped."""
    body = b"Action=ListQueues"
    sock.sendall(
        b"POST / HTTP/1.1\r\nHost: localhost\r\n"
        b"Content-Type: application/x-www-form-urlencoded\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    answer = b""
    while b"\r\n\r\n" not in answer:
        chunk = sock.recv(65536)
        assert chunk, f"closed after {answer!r}"
        answer += chunk
    head, _, rest = answer.partition(b"\r\n\r\n")
    length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
    while len(rest) < length:
        rest += sock.recv(65536)
    return head


def test_a_connection_busy_past_its_first_deadline_closes_an_idle_timeout_after_its_last_answer(
    impatient,
):
    # The deadline's timer is made once per connection and moved on by each answer
    # (connection_limits.GuardedProtocol._arm): calls spread over twice the timeout
    # keep the connection, and the close comes a timeout after the last of them.
    with connect(impatient) as client:
        started = time.monotonic()
        while time.monotonic() - started < 2 * IDLE_TIMEOUT:
            assert sqs_call(client).startswith(b"HTTP/1.1 200")
            time.sleep(IDLE_TIMEOUT / 4)  # the time between calls is what is tested
        assert sqs_call(client).startswith(b"HTTP/1.1 200")
        waited = seconds_until_closed(client)
    assert IDLE_TIMEOUT * 0.9 <= waited < IDLE_TIMEOUT + SLACK


def test_a_long_poll_quiet_for_longer_than_the_idle_timeout_is_not_cut(impatient):
    # given a queue, and a message sent while a long poll waits three idle timeouts
    url = httpx.post(impatient, data={"Action": "CreateQueue", "QueueName": "patient"})
    assert url.status_code == 200
    queue = f"{impatient}/000000000000/patient"
    sender = threading.Timer(
        2.5 * IDLE_TIMEOUT,
        lambda: httpx.post(queue, data={"Action": "SendMessage", "MessageBody": "late"}),
    )
    sender.start()
    # when the poll waits
    started = time.monotonic()
    answer = httpx.post(
        queue, data={"Action": "ReceiveMessage", "WaitTimeSeconds": "5"}, timeout=30
    )
    sender.join()
    # then it gets the message, on the connection it waited on
    assert answer.status_code == 200
    assert "<Body>late</Body>" in answer.text
    assert time.monotonic() - started >= 2.5 * IDLE_TIMEOUT


def test_connections_beyond_the_cap_are_refused_with_503_until_one_closes():
    with tempfile.TemporaryDirectory() as scratch, ExitStack() as open_sockets:
        # every connection from one address here: its share is the whole cap
        server = start_hopper("--max-connections", str(CAP), "--max-connections-per-address",
                              str(CAP), log=Path(scratch) / "hopper.log")
        try:
            # given CAP connections, each open after an answer (so the server holds it)
            held = [open_sockets.enter_context(connect(server.url)) for _ in range(CAP)]
            for client in held:
                assert request(client).startswith(b"HTTP/1.1 200")
            # when one more connects, it is told why and closed
            with connect(server.url) as extra:
                refusal = b""
                while chunk := extra.recv(65536):
                    refusal += chunk
            assert refusal.startswith(b"HTTP/1.1 503")
            assert b"connection: close" in refusal
            assert f"more than {CAP} connections".encode() in refusal
            # and once one of the held ones closes, a new client is served again
            held.pop().close()
            for _ in range(50):
                try:
                    if httpx.get(f"{server.url}/health").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                time.sleep(0.05)  # the server has not seen the close yet
            else:
                pytest.fail("no client was served after a held connection closed")
        finally:
            assert server.stop() == 0, server.output()


def test_the_idle_timeout_and_the_cap_come_from_the_environment():
    settings = load({}, {"HOPPER_IDLE_TIMEOUT": "7", "HOPPER_MAX_CONNECTIONS": "40"})
    assert (settings.idle_timeout, settings.max_connections) == (7, 40)


def test_a_request_head_longer_than_64_kib_is_refused_and_closed(impatient):
    with connect(impatient) as client:
        client.sendall(b"GET /health HTTP/1.1\r\nHost: localhost\r\nX-Long: ")
        for _ in range(256):  # 4 MiB, if nobody stops it; stop as soon as an answer waits
            client.sendall(b"a" * 16384)
            # Paced by waiting for the answer, so it is read before the close resets it.
            if select.select([client], [], [], 0.01)[0]:
                break
        answer = b""
        with contextlib.suppress(OSError):
            while chunk := client.recv(65536):
                answer += chunk
    assert answer.startswith(b"HTTP/1.1 400"), answer[:200]
    assert b"<Code>MalformedQueryString</Code>" in answer


def test_a_request_head_of_32_kib_is_served(impatient):
    with connect(impatient) as client:
        client.sendall(b"GET /health HTTP/1.1\r\nHost: localhost\r\nX-Long: " + b"a" * 32768
                       + b"\r\n\r\n")
        answer = client.recv(65536)
    assert answer.startswith(b"HTTP/1.1 200")


def test_a_request_whose_body_comes_with_its_head_in_one_read_is_served(impatient):
    # A whole request of 128 KiB in one sendall arrives in one read on loopback: its
    # body is not part of its head, however long.
    body = b"x" * 131072
    with connect(impatient) as client:
        for _ in range(2):  # and the next one on the same connection too
            client.sendall(b"GET /health HTTP/1.1\r\nHost: localhost\r\n"
                           b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            answer = b""
            while not answer.endswith(b"}"):  # a whole answer: /health's ends its JSON
                chunk = client.recv(65536)
                assert chunk, f"closed after {answer!r}"
                answer += chunk
            assert answer.startswith(b"HTTP/1.1 200"), answer[:300]
