"""A live hopper server (a real `python -m hopper serve` process) and a boto3 client for it."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import boto3
import httpx
import pytest
from botocore.config import Config

SERVER_SOURCE = Path(__file__).resolve().parents[2] / "server"
START_TIMEOUT = 20.0
STOP_TIMEOUT = 10.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def server_environment() -> dict[str, str]:
    # The session's own HOPPER_* settings must not leak in: this server is in-memory.
    env = {name: value for name, value in os.environ.items() if not name.startswith("HOPPER_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SERVER_SOURCE), env.get("PYTHONPATH")]))
    return env


def wait_until_healthy(process: subprocess.Popen[bytes], url: str, log: Path) -> None:
    """Probe /health until it answers; fail at once if the server process dies."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"hopper exited with {process.returncode}:\n{log.read_text()}")
        try:
            if httpx.get(f"{url}/health", timeout=1.0).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.05)  # the port is not open yet: probe again shortly
    process.kill()
    pytest.fail(f"hopper did not become healthy in {START_TIMEOUT}s:\n{log.read_text()}")


@pytest.fixture(scope="session")
def endpoint() -> Iterator[str]:
    """The URL of a hopper server on a free port (in-memory store, relaxed timing),
    stopped with SIGTERM at the end of the session, which must exit 0."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as scratch:
        log = Path(scratch) / "hopper.log"
        with log.open("wb") as output:
            process = subprocess.Popen(
                [sys.executable, "-m", "hopper", "serve", "--port", str(port), "--relaxed-timing"],
                env=server_environment(), stdout=output, stderr=subprocess.STDOUT,
            )
        try:
            wait_until_healthy(process, url, log)
            yield url
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
            try:
                code = process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                pytest.fail(f"hopper ignored SIGTERM:\n{log.read_text()}")
        assert code == 0, f"hopper exited with {code}:\n{log.read_text()}"


@pytest.fixture(scope="session")
def sqs(endpoint: str):
    """A boto3 SQS client (JSON protocol) pointed at the live server."""
    return boto3.client(
        "sqs",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
        config=Config(retries={"total_max_attempts": 1}),
    )
