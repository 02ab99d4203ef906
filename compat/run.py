"""Running one client's workload against a hopper endpoint, and reading its verdict.

A workload prints `client <name> <version...> <protocol>`, then `ok <step> <seconds>`
per step (and `gap <step>: <why>` for a step its SDK cannot express) and `done` at the
end, or `FAIL <step>: <why>` and exits non-zero.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from compat import envs
from compat.clients import Client

WORKLOADS = Path(__file__).resolve().parent / "workloads"
WORKLOAD_TIMEOUT = 300


@dataclass
class Result:
    client: str
    protocol: str = "?"
    version: str = "?"
    ok: bool = False
    steps: list[tuple[str, float]] = field(default_factory=list)
    gaps: list[str] = field(default_factory=list)  # steps its SDK cannot express
    failure: str = ""
    output: str = ""
    setup_seconds: float = 0.0
    run_seconds: float = 0.0

    def explain(self) -> str:
        """Everything a failing test needs to say."""
        return (f"{self.client} ({self.version}, {self.protocol}): {self.failure}\n"
                f"steps passed: {[name for name, _ in self.steps]}\n{self.output[-8000:]}")


def run_client(client: Client, endpoint: str) -> Result:
    """Install `client` if need be, run its workload against `endpoint`, read the result."""
    result = Result(client.name)
    started = time.monotonic()
    try:
        command, cwd = _command(client, endpoint)
    except envs.SetupError as failure:
        result.failure = f"install failed: {failure}"
        return result
    result.setup_seconds = time.monotonic() - started
    started = time.monotonic()
    try:
        done = subprocess.run(command, cwd=cwd, env=_environment(client), capture_output=True,
                              text=True, timeout=WORKLOAD_TIMEOUT)
    except subprocess.TimeoutExpired as timeout:
        result.output = f"{timeout.stdout or ''}\n{timeout.stderr or ''}"
        result.failure = f"the workload ran over {WORKLOAD_TIMEOUT}s"
        return result
    result.run_seconds = time.monotonic() - started
    result.output = f"{done.stdout}\n--- stderr ---\n{done.stderr}"
    _read(done.stdout, result)
    if done.returncode != 0 and not result.failure:
        result.failure = f"the workload exited {done.returncode}"
    result.ok = done.returncode == 0 and not result.failure and "done" in done.stdout.split()
    if not result.ok and not result.failure:
        result.failure = "the workload did not finish"
    return result


def _command(client: Client, endpoint: str) -> tuple[list[str], Path]:
    prefix = f"compat-{client.name}-{uuid.uuid4().hex[:8]}"
    common = ["--endpoint", endpoint, "--prefix", prefix, *client.arguments]
    if client.runtime == "node":
        node_dir = envs.node_ready()
        return [shutil.which("node") or "node", client.script, *common], node_dir
    if client.runtime == "go":
        return [str(envs.go_ready()), *common], WORKLOADS
    if client.runtime == "ruby":
        script = Path(__file__).resolve().parent / "ruby" / client.script
        return [envs.ruby_ready(), str(script), *common], WORKLOADS
    python = envs.python_for(client)
    if client.name == "awscli":
        common += ["--aws", str(python.parent / "aws")]
    return [str(python), client.script, *common], WORKLOADS


def _environment(client: Client) -> dict[str, str]:
    """The caller's environment without its AWS settings: fixed test credentials,
    no config or credentials files, no instance metadata lookups."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("AWS_", "HOPPER_", "VIRTUAL_ENV", "PYTHON"))}
    env |= {
        "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
        "AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1",
        "AWS_CONFIG_FILE": os.devnull, "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        "AWS_EC2_METADATA_DISABLED": "true", "PYTHONPATH": str(WORKLOADS),
        "PYTHONUNBUFFERED": "1",
    }
    return env


def _read(stdout: str, result: Result) -> None:
    for line in stdout.splitlines():
        head, _, rest = line.partition(" ")
        if head == "client":
            parts = rest.split(" ")
            result.protocol = parts[-1]
            result.version = " ".join(parts[1:-1])
        elif head == "ok":
            name, _, seconds = rest.partition(" ")
            result.steps.append((name, float(seconds or 0)))
        elif head == "gap":
            result.gaps.append(rest.partition(":")[0])
        elif head == "FAIL":
            result.failure = rest
