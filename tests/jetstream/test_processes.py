"""Whole `hopper serve` processes over one JetStream, driven with boto3.

JetStream-only for the reason the Postgres process tests are Postgres-only: what
survives a killed process, and what several processes share, belongs to the engine
under them. Each test starts nats-server nodes of its own when it kills or stops them.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from botocore.exceptions import ClientError

from tests.postgres.test_processes import (
    KILL_AFTER,
    LOAD_SECONDS,
    SENDERS,
    WAIT_SECONDS,
    SendLoad,
    client,
    in_thread,
    receive_everything,
)
from tests.server.processes import (
    HopperProcess,
    server_environment,
    start_hopper,
    wait_for_metric,
)

from .servers import Node, free_port, new_node, one_node


@contextmanager
def serving(*options: str, log: Path) -> Iterator[HopperProcess]:
    """A server with `options`, stopped with SIGTERM afterwards (which must exit 0)."""
    server = start_hopper(*options, log=log)
    try:
        yield server
    finally:
        code = server.stop()
    assert code == 0, server.output()


@pytest.fixture
def own_node(tmp_path: Path) -> Iterator[Node]:
    """A single nats-server of this test's own, to stop and start again."""
    node = new_node("own", tmp_path / "nats")
    node.start()
    try:
        yield node
    finally:
        node.stop()


def test_serve_with_jetstream_unreachable_says_so_in_one_line_and_exits_nonzero() -> None:
    port = free_port()  # a port nobody listens on
    done = subprocess.run(
        # its own port: the default may be taken on a shared machine, which it checks first
        [sys.executable, "-m", "hopper", "serve", "--port", str(free_port()),
         "--nats-url", f"nats://127.0.0.1:{port}"],
        env=server_environment(), capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 2
    lines = (done.stdout + done.stderr).strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"hopper: cannot use JetStream at nats://127.0.0.1:{port}: ")


@pytest.mark.slow
def test_serve_on_a_server_with_the_default_max_payload_refuses_in_one_line(
    tmp_path: Path,
) -> None:
    node = new_node("small", tmp_path / "nats")
    node.max_payload = 1024 * 1024  # nats-server's default: a 1 MiB message does not fit
    node.start()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "hopper", "serve", "--port", str(free_port()),
             "--nats-url", node.url],
            env=server_environment(), capture_output=True, text=True, timeout=60,
        )
    finally:
        node.stop()
    assert done.returncode == 2
    lines = (done.stdout + done.stderr).strip().splitlines()
    assert len(lines) == 1, lines
    assert "max_payload is 1048576 bytes" in lines[0], lines[0]


@pytest.mark.slow
async def test_a_server_killed_during_a_send_load_loses_no_acknowledged_message(
    tmp_path: Path,
) -> None:
    nats_url = one_node().url
    first = await in_thread(
        lambda: start_hopper("--nats-url", nats_url, log=tmp_path / "first.log")
    )
    try:
        url = client(first).create_queue(QueueName="kill")["QueueUrl"]
        load = SendLoad(first, url)
        load.start()
        deadline = time.monotonic() + LOAD_SECONDS / 2
        while load.count() < KILL_AFTER and time.monotonic() < deadline:
            await asyncio.sleep(0.01)  # a load runs in threads: look at its count now and then
        acknowledged_before_kill = load.count()
        first.process.kill()  # SIGKILL: sends cut mid-flight
        await in_thread(first.process.wait, WAIT_SECONDS)
    finally:
        if first.process.poll() is None:
            first.process.kill()
            first.process.wait(WAIT_SECONDS)
    load.stop.set()
    await in_thread(load.join)
    assert acknowledged_before_kill > 0, first.output()
    assert first.process.returncode == -signal.SIGKILL

    with serving("--nats-url", nats_url, log=tmp_path / "second.log") as second:
        sqs = client(second)
        most = len(load.acknowledged) + SENDERS * 10
        received = await in_thread(receive_everything, sqs, url, most)
        sqs.delete_queue(QueueUrl=url)

    print(f"\n{len(load.acknowledged)} acknowledged, {len(received)} received after the kill")
    assert len(received) == len(set(received)), "a message was received twice"
    missing = set(load.acknowledged) - set(received)
    assert not missing, f"{len(missing)} of {len(load.acknowledged)} acknowledged messages lost"
    assert len(load.acknowledged) <= len(received) <= most


async def test_a_long_poll_on_one_server_is_woken_by_a_send_on_another_within_100ms(
    tmp_path: Path,
) -> None:
    nats_url = one_node().url
    with (
        serving("--nats-url", nats_url, log=tmp_path / "a.log") as one,
        serving("--nats-url", nats_url, log=tmp_path / "b.log") as other,
    ):
        receiver, sender = client(one, read_timeout=30), client(other)
        url = sender.create_queue(QueueName="wake")["QueueUrl"]
        # A short round first, so both processes have read the queue and the measured
        # send pays for no set-up.
        sender.send_message(QueueUrl=url, MessageBody="warm-up")
        [warm] = receiver.receive_message(QueueUrl=url, WaitTimeSeconds=1)["Messages"]
        receiver.delete_message(QueueUrl=url, ReceiptHandle=warm["ReceiptHandle"])

        returned: dict[str, Any] = {}

        def long_poll() -> None:
            returned["answer"] = receiver.receive_message(QueueUrl=url, WaitTimeSeconds=20)
            returned["at"] = time.monotonic()

        poller = threading.Thread(target=long_poll)
        poller.start()
        # Parked: the process that holds the long poll says so. (It counts a poll from
        # before its first look, so the send may come before that look; the test then
        # proves less, but still passes only if the message arrives in time.)
        await in_thread(wait_for_metric, one.url, "hopper_long_polls_waiting", 1.0)

        def send() -> tuple[Any, float]:
            answer = sender.send_message(QueueUrl=url, MessageBody="wake")
            return answer, time.monotonic()

        sent, acknowledged = await in_thread(send)
        await in_thread(poller.join, 25.0)
        assert not poller.is_alive()
        sender.delete_queue(QueueUrl=url)

    [message] = returned["answer"]["Messages"]
    assert message["MessageId"] == sent["MessageId"]
    latency = returned["at"] - acknowledged
    print(f"\nwoken {latency * 1000:.1f} ms after the send's acknowledgement")
    assert latency < 0.1


def error_code(call: Any) -> str | None:
    """The SQS error code `call` answered, or None when it succeeded."""
    try:
        call()
    except ClientError as error:
        return str(error.response["Error"]["Code"])
    return None


@pytest.mark.slow
async def test_jetstream_lost_while_running_answers_service_unavailable_then_recovers(
    own_node: Node, tmp_path: Path
) -> None:
    with serving("--nats-url", own_node.url, log=tmp_path / "hopper.log") as server:
        sqs = client(server)
        url = sqs.create_queue(QueueName="lost")["QueueUrl"]
        sqs.send_message(QueueUrl=url, MessageBody="before")

        own_node.kill()
        code = await in_thread(error_code, lambda: sqs.send_message(QueueUrl=url, MessageBody="x"))
        assert code == "ServiceUnavailable", code
        # /health says so, for a load balancer to send clients elsewhere
        health = await in_thread(httpx.get, f"{server.url}/health")
        assert health.status_code == 503, health.text
        assert "JetStream" in health.json()["reason"]
        own_node.start()  # same port, same store directory

        started = time.monotonic()
        while time.monotonic() - started < WAIT_SECONDS:
            if await in_thread(error_code, lambda: sqs.get_queue_attributes(QueueUrl=url)) is None:
                break
            await asyncio.sleep(0.05)  # reconnecting: ask again shortly
        back = time.monotonic() - started
        print(f"\nserving again {back * 1000:.0f} ms after JetStream restarted")
        messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
        assert [m["Body"] for m in messages] == ["before"]
        assert (await in_thread(httpx.get, f"{server.url}/health")).status_code == 200
