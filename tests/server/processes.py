"""Real `python -m hopper serve` processes for tests: started on a free port, probed
until healthy, stopped with a signal. Used by the live-server fixtures here and by the
process tests in tests/postgres."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

SERVER_SOURCE = Path(__file__).resolve().parents[2] / "server"
START_TIMEOUT = 20.0
STOP_TIMEOUT = 10.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def server_environment() -> dict[str, str]:
    # The session's own HOPPER_* settings must not leak in: the flags say it all.
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


@dataclass
class HopperProcess:
    """One running server: its URL, its process and the file its output goes to."""

    process: subprocess.Popen[bytes]
    url: str
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self, sign: signal.Signals = signal.SIGTERM) -> int:
        """Send `sign` and return the exit code; fail if the process outlives STOP_TIMEOUT."""
        if self.process.poll() is None:
            self.process.send_signal(sign)
        try:
            return self.process.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(STOP_TIMEOUT)
            pytest.fail(f"hopper ignored {sign.name}:\n{self.output()}")


def start_hopper(*options: str, log: Path) -> HopperProcess:
    """`hopper serve` on a free port with `options`, healthy on return; output to `log`."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with log.open("ab") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "hopper", "serve", "--port", str(port), *options],
            env=server_environment(), stdout=output, stderr=subprocess.STDOUT,
        )
    wait_until_healthy(process, url, log)
    return HopperProcess(process, url, log)


def wait_for_metric(base: str, name: str, value: float, timeout: float = 10.0) -> None:
    """Scrape the server at `base` until the unlabelled metric `name` reads `value`:
    how a test sees another process reach a state (a long poll parked, or ended)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in httpx.get(f"{base}/metrics").text.splitlines():
            if line.startswith(name + " ") and float(line.split()[1]) == value:
                return
        time.sleep(0.02)  # not there yet: look again shortly
    pytest.fail(f"{name} never reached {value}")
