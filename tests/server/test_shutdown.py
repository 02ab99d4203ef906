"""Start-up and shutdown of a live `hopper serve` process.

On SIGTERM the server stops accepting connections, answers the long polls it holds
at once (empty, as at the end of their wait), lets the requests in progress finish,
and exits 0 well within its bound."""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hopper.observability.shutdown import Shutdown

from .conftest import sqs_client, store_options
from .processes import HopperProcess, start_hopper, wait_for_metric

# The exit bound: the long polls end at once and uvicorn's grace is 10 s, but a
# shutdown with nothing slow in flight takes well under this.
EXIT_WITHIN = 5.0


@pytest.fixture
def server(tmp_path: Path) -> Iterator[HopperProcess]:
    hopper = start_hopper("--relaxed-timing", log=tmp_path / "hopper.log")
    yield hopper
    hopper.stop(signal.SIGKILL)


def test_sigterm_answers_long_polls_finishes_requests_and_exits(server: HopperProcess) -> None:
    sqs = sqs_client(server.url)
    url = sqs.create_queue(QueueName="drained")["QueueUrl"]
    answers: list[dict[str, Any]] = []
    poll = threading.Thread(
        target=lambda: answers.append(sqs.receive_message(QueueUrl=url, WaitTimeSeconds=20))
    )
    poll.start()
    wait_for_metric(server.url, "hopper_long_polls_waiting", 1.0)
    # A request in progress: its headers are in, the app has asked for its body
    # (uvicorn's 100 Continue says so), and the body is still to come.
    late = _start_send(server.url, url, "sent during shutdown")

    signalled = time.monotonic()
    server.process.send_signal(signal.SIGTERM)

    poll.join(EXIT_WITHIN)
    assert not poll.is_alive(), "the long poll was not answered on SIGTERM"
    assert "Messages" not in answers[0]
    assert time.monotonic() - signalled < 2.0
    _wait_until_refused(server.url)
    response = _finish_send(late)
    assert response.startswith("HTTP/1.1 200"), response
    assert '"MessageId"' in response
    assert server.process.wait(EXIT_WITHIN) == 0
    assert time.monotonic() - signalled < EXIT_WITHIN


async def test_a_shutdown_step_that_does_not_end_is_cut_off_and_the_next_still_runs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Given a shutdown of 0.2 s whose first step waits for ever (a store that stopped
    # answering), and whose second fails
    stopping = Shutdown(0.2)
    closed = asyncio.Event()

    async def fails() -> None:
        raise OSError("connection reset")

    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="hopper"):
        await stopping.step("the stuck one", asyncio.Event().wait())
        await stopping.step("the failing one", fails())
        await stopping.step("the store", _set(closed))
    # Then each is cut off or passed over, and the last still runs, within the budget
    # and the last steps' minimum
    assert closed.is_set()
    assert time.monotonic() - started < 2.0
    warnings = [r.getMessage() for r in caplog.records]
    assert any("the stuck one did not finish" in w for w in warnings), warnings
    assert any("the failing one failed (connection reset)" in w for w in warnings), warnings


async def _set(event: asyncio.Event) -> None:
    event.set()


@pytest.mark.parametrize("store", ["memory", "postgres"])
def test_start_up_lines_name_store_schema_address_auth_and_declared_queues(
    tmp_path: Path, store: str
) -> None:
    with store_options(store) as options:
        hopper = start_hopper(*options, log=tmp_path / "hopper.log")
        code = hopper.stop()
    output = hopper.output()
    assert code == 0, output
    if store == "postgres":
        assert "PostgreSQL store at 127.0.0.1/" in output
        assert "schema version 0" in output
    else:
        assert "in-memory store" in output
    assert f"listening on {hopper.url}" in output
    assert "auth off" in output
    assert "queues declared: none" in output


def test_start_up_names_the_declared_queues(tmp_path: Path) -> None:
    config = tmp_path / "hopper.toml"
    config.write_text('[[queues]]\nname = "jobs"\n\n[[queues]]\nname = "jobs-dead"\n')
    hopper = start_hopper("--config", str(config), log=tmp_path / "hopper.log")
    code = hopper.stop()
    assert code == 0, hopper.output()
    assert "queues declared: 2 (jobs, jobs-dead)" in hopper.output()


def test_json_logs_carry_the_request_id_sqs_returned(tmp_path: Path) -> None:
    hopper = start_hopper("--log-format", "json", log=tmp_path / "hopper.log")
    try:
        sqs = sqs_client(hopper.url)
        url = sqs.create_queue(QueueName="logged")["QueueUrl"]
        sent = sqs.send_message(QueueUrl=url, MessageBody="hello")
        missing = sqs.exceptions.QueueDoesNotExist
        with pytest.raises(missing) as refused:
            sqs.get_queue_url(QueueName="nowhere")
    finally:
        code = hopper.stop()
    assert code == 0, hopper.output()
    lines = [json.loads(line) for line in hopper.output().splitlines() if line.strip()]
    by_id = {line.get("request_id"): line for line in lines}
    send = by_id[sent["ResponseMetadata"]["RequestId"]]
    assert (send["action"], send["outcome"], send["status"]) == ("SendMessage", "ok", 200)
    failure = by_id[refused.value.response["ResponseMetadata"]["RequestId"]]
    assert (failure["action"], failure["outcome"]) == ("GetQueueUrl", "QueueDoesNotExist")
    assert {"time", "level", "logger", "message"} <= set(send)
    assert any("listening on" in line["message"] for line in lines)


# --- helpers ---------------------------------------------------------------------------


def _start_send(base: str, queue_url: str, body: str) -> tuple[socket.socket, bytes]:
    payload = json.dumps({"QueueUrl": queue_url, "MessageBody": body}).encode()
    host, port = base.removeprefix("http://").split(":")
    connection = socket.create_connection((host, int(port)), timeout=EXIT_WITHIN)
    connection.sendall(
        b"POST / HTTP/1.1\r\n"
        + f"Host: {host}:{port}\r\n".encode()
        + b"Content-Type: application/x-amz-json-1.0\r\n"
        + b"X-Amz-Target: AmazonSQS.SendMessage\r\n"
        + f"Content-Length: {len(payload)}\r\n".encode()
        + b"Expect: 100-continue\r\n\r\n"
    )
    interim = connection.recv(1024)
    assert interim.startswith(b"HTTP/1.1 100"), interim
    return connection, payload


def _finish_send(late: tuple[socket.socket, bytes]) -> str:
    connection, payload = late
    with connection:
        connection.sendall(payload)
        received = b""
        while chunk := connection.recv(65536):
            received += chunk
    return received.decode()


def _wait_until_refused(base: str) -> None:
    host, port = base.removeprefix("http://").split(":")
    deadline = time.monotonic() + EXIT_WITHIN
    while time.monotonic() < deadline:
        try:
            socket.create_connection((host, int(port)), timeout=1.0).close()
        except OSError:
            return
        time.sleep(0.02)  # the listener closes on uvicorn's next tick
    pytest.fail("the server still accepts connections after SIGTERM")
