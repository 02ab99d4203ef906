"""A long poll whose client goes away ends there: messages sent afterwards are not
handed to it nor claimed for it, so they wait for a receive somebody reads.

Without this, a worker stopped in the middle of a 20-second poll would leave the poll
parked in the server, and the next message sent in that time would be delivered to
nobody and stay invisible for its whole visibility timeout."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import sqs_client, store_options
from .processes import HopperProcess, start_hopper, wait_for_metric

WAITING = "hopper_long_polls_waiting"


@pytest.fixture(params=["memory", "postgres"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[HopperProcess]:
    # A server of its own: the gauge counts every long poll of the process.
    with store_options(request.param) as options:
        hopper = start_hopper(*options, "--relaxed-timing", log=tmp_path / "hopper.log")
        try:
            yield hopper
        finally:
            assert hopper.stop() == 0, hopper.output()


def test_a_long_poll_ends_when_its_client_goes_away(server: HopperProcess) -> None:
    sqs = sqs_client(server.url)
    url = sqs.create_queue(QueueName="departed")["QueueUrl"]
    poll = _start_long_poll(server.url, url)
    wait_for_metric(server.url, WAITING, 1.0)

    poll.close()
    wait_for_metric(server.url, WAITING, 0.0)

    sqs.send_message(QueueUrl=url, MessageBody="for somebody")
    received = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=0)
    assert [m["Body"] for m in received["Messages"]] == ["for somebody"]


def test_a_long_poll_still_answers_a_client_that_stays(server: HopperProcess) -> None:
    sqs = sqs_client(server.url)
    url = sqs.create_queue(QueueName="stayed")["QueueUrl"]
    poll = _start_long_poll(server.url, url)
    wait_for_metric(server.url, WAITING, 1.0)

    sqs.send_message(QueueUrl=url, MessageBody="for the poll")
    answer = _read_answer(poll)
    assert answer.startswith(b"HTTP/1.1 200"), answer
    assert json.loads(answer.split(b"\r\n\r\n", 1)[1])["Messages"][0]["Body"] == "for the poll"
    poll.close()


def _start_long_poll(base: str, queue_url: str) -> socket.socket:
    payload = json.dumps(
        {"QueueUrl": queue_url, "WaitTimeSeconds": 20, "MaxNumberOfMessages": 10}
    ).encode()
    host, port = base.removeprefix("http://").split(":")
    connection = socket.create_connection((host, int(port)), timeout=10)
    connection.sendall(
        b"POST / HTTP/1.1\r\n"
        + f"Host: {host}:{port}\r\n".encode()
        + b"Content-Type: application/x-amz-json-1.0\r\n"
        + b"X-Amz-Target: AmazonSQS.ReceiveMessage\r\n"
        + f"Content-Length: {len(payload)}\r\n\r\n".encode()
        + payload
    )
    return connection


def _read_answer(connection: socket.socket) -> bytes:
    answer = b""
    while b"\r\n\r\n" not in answer:
        answer += connection.recv(65536)
    head, body = answer.split(b"\r\n\r\n", 1)
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        body += connection.recv(65536)
    return head + b"\r\n\r\n" + body
