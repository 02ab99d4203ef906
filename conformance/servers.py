"""The two servers a run compares: moto in this process, hopper as a subprocess.

Both are started on free ports and stopped at the end, with bounded waits: a server
that does not come up in `START_TIMEOUT` seconds fails the run with its log.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
SERVER_SOURCE = ROOT / "server"
START_TIMEOUT = 30.0
STOP_TIMEOUT = 10.0
# The same PostgreSQL the tests use (tests/postgres/databases.py), in a schema of its own.
DATABASE_URL = os.environ.get(
    "HOPPER_TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test"
)


class ServerError(RuntimeError):
    """A server did not start (the message carries its log)."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def moto_server() -> Iterator[str]:
    """A moto server (ThreadedMotoServer) on a free port; its endpoint URL."""
    from moto.server import ThreadedMotoServer

    # no line per request, nor a traceback per moto crash (a 500 is an answer here)
    logging.getLogger("werkzeug").setLevel(logging.CRITICAL)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=free_port(), verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


@contextlib.contextmanager
def hopper_server(store: str, *, relaxed: bool = True) -> Iterator[str]:
    """`python -m hopper serve` on a free port (`--relaxed-timing` unless `relaxed` is
    false), on the memory store or on Postgres in a fresh schema (dropped afterwards);
    its endpoint URL. In AWS receipt mode: the run compares what AWS answers, and a
    superseded receipt is where strict mode deliberately answers otherwise."""
    port = free_port()
    command = [sys.executable, "-m", "hopper", "serve", "--port", str(port), "--receipts", "aws"]
    if relaxed:
        command.append("--relaxed-timing")
    schema = None
    if store == "postgres":
        schema = f"conformance_{uuid.uuid4().hex[:12]}"
        command += ["--database-url", DATABASE_URL, "--database-schema", schema]
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as scratch:
        log = Path(scratch) / "hopper.log"
        with log.open("wb") as output:
            process = subprocess.Popen(
                command, env=_environment(), stdout=output, stderr=subprocess.STDOUT
            )
        try:
            _wait_until_healthy(process, url, log)
            yield url
        finally:
            _stop(process)
            if schema is not None:
                _drop_schema(schema)


def _environment() -> dict[str, str]:
    # The caller's HOPPER_* settings must not leak into the server under test.
    env = {name: value for name, value in os.environ.items() if not name.startswith("HOPPER_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SERVER_SOURCE), env.get("PYTHONPATH")]))
    return env


def _wait_until_healthy(process: subprocess.Popen[bytes], url: str, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ServerError(f"hopper exited with {process.returncode}:\n{log.read_text()}")
        try:
            if httpx.get(f"{url}/health", timeout=1.0).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.1)  # the port is not open yet: there is no event to await
    raise ServerError(f"hopper was not healthy within {START_TIMEOUT}s:\n{log.read_text()}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        process.wait(STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(STOP_TIMEOUT)


def _drop_schema(schema: str) -> None:
    import asyncio

    import asyncpg

    async def drop() -> None:
        connection = await asyncpg.connect(DATABASE_URL, timeout=10)
        try:
            await connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE', timeout=30)
        finally:
            await connection.close()

    try:
        asyncio.run(drop())
    except (OSError, asyncpg.PostgresError, TimeoutError) as failure:
        print(f"conformance: could not drop schema {schema}: {failure}", file=sys.stderr)
