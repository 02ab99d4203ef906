"""How a call's answer decides its batch (dispatch/calls.py), against a real server on
loopback: success, partial failure, an error status, a Lambda function error, an
answer too slow, a refused connection."""

from __future__ import annotations

from hopper.core.model import Delivery
from hopper.dispatch.calls import Outcome, post
from hopper.dispatch.connections import Connection

from .test_connections import server
from .test_payloads import delivery

BATCH: list[Delivery] = [delivery("a"), delivery("b")]
BOTH = frozenset({"a", "b"})


def answer(status: str, body: bytes, *headers: str) -> bytes:
    head = "".join(f"{header}\r\n" for header in headers)
    return f"HTTP/1.1 {status}\r\ncontent-length: {len(body)}\r\n{head}\r\n".encode() + body


async def call(raw: bytes, timeout: float = 5) -> Outcome:
    async with server(lambda request, number: raw) as url:
        connection = Connection(url)
        try:
            return await post(connection, b"{}", {}, timeout, BATCH)
        finally:
            connection.close()


async def test_a_2xx_deletes_the_batch() -> None:
    assert await call(answer("200 OK", b"null")) == Outcome(frozenset(), None, "success")


async def test_batch_item_failures_fail_only_those() -> None:
    body = b'{"batchItemFailures":[{"itemIdentifier":"b"}]}'
    outcome = await call(answer("200 OK", body))
    assert (outcome.failed, outcome.label) == (frozenset({"b"}), "partial")
    assert outcome.error == "HTTP 200: " + body.decode()


async def test_an_error_status_fails_all_with_the_first_kib_of_its_answer() -> None:
    outcome = await call(answer("503 Busy", b"x" * 5000))
    assert (outcome.failed, outcome.label) == (BOTH, "error")
    assert outcome.error == "HTTP 503: " + "x" * 1024


async def test_a_lambda_function_error_fails_all_though_its_status_is_200() -> None:
    body = b'{"errorMessage":"boom","errorType":"Exception"}'
    outcome = await call(answer("200 OK", body, "X-Amz-Function-Error: Unhandled"))
    assert (outcome.failed, outcome.label) == (BOTH, "error")
    assert outcome.error == f"HTTP 200: {body.decode()}"


async def test_a_refused_connection_fails_all() -> None:
    outcome = await post(Connection("http://127.0.0.1:1/"), b"{}", {}, 5, BATCH)
    assert (outcome.failed, outcome.label) == (BOTH, "refused")
    assert outcome.error is not None and outcome.error.startswith("connection failed: ")
