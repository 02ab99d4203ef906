"""Installing the clients: a virtualenv per Python client, node_modules for Node, a
binary built offline for Go, and a check that Ruby can load its SDK.

Installs are cached under `CACHE` (compat/.venvs, gitignored; HOPPER_COMPAT_CACHE
moves it) and stamped with what was asked for, so a second run reuses them and a
changed pin reinstalls. An install that fails raises SetupError with the installer's
output: a client that cannot be installed fails its run, it is never skipped. Several
runs may share the cache (test runs in one working tree): each install holds a file
lock, so a run waits for another's install instead of racing it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from compat.clients import Client

HERE = Path(__file__).resolve().parent
NODE_DIR = HERE / "node"
GO_SOURCE = HERE / "go" / "workload.go"
# Debian's Go libraries (golang-github-aws-aws-sdk-go-v2-dev) sit in a GOPATH tree, not
# in a module cache: GOPATH mode builds against them with no network at all.
GOPATH = Path("/usr/share/gocode")
GO_SQS = GOPATH / "src/github.com/aws/aws-sdk-go-v2/service/sqs"
CACHE = Path(os.environ.get("HOPPER_COMPAT_CACHE", HERE / ".venvs"))
INSTALL_TIMEOUT = 900
STAMP = ".hopper-compat-stamp"


class SetupError(RuntimeError):
    """A client could not be installed (the message carries the installer's output)."""


def python_for(client: Client) -> Path:
    """The interpreter to run `client`'s workload with, installed if need be."""
    if not client.requirements:
        return Path(sys.executable)
    venv = CACHE / client.name
    wanted = "\n".join([sys.version.split()[0], *client.requirements])
    stamp = venv / STAMP
    python = venv / "bin" / "python"
    with _locked(client.name):
        if stamp.exists() and python.exists() and stamp.read_text() == wanted:
            return python
        shutil.rmtree(venv, ignore_errors=True)
        _run([sys.executable, "-m", "venv", str(venv)], f"creating the {client.name} virtualenv")
        _run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
              "--no-input", *client.requirements],
             f"installing {' '.join(client.requirements)}")
        stamp.write_text(wanted)
    return python


def node_ready() -> Path:
    """compat/node with its node_modules installed (`npm ci` from package-lock.json)."""
    lock = NODE_DIR / "package-lock.json"
    wanted = hashlib.sha256(lock.read_bytes()).hexdigest()
    stamp = NODE_DIR / "node_modules" / STAMP
    with _locked("node"):
        if stamp.exists() and stamp.read_text() == wanted:
            return NODE_DIR
        npm = shutil.which("npm")
        if npm is None or shutil.which("node") is None:
            raise SetupError("node and npm must be on PATH for the Node clients")
        _run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], "npm ci",
             cwd=NODE_DIR)
        stamp.write_text(wanted)
    return NODE_DIR


def go_ready() -> Path:
    """The Go workload's binary, built (once per source, Go and SDK version) against
    Debian's aws-sdk-go-v2 with GO111MODULE=off: no proxy, no download."""
    go = shutil.which("go")
    if go is None:
        raise SetupError("go must be on PATH for the Go client (Debian: golang-go)")
    version = go_sdk_version()
    source = GO_SOURCE.read_bytes()
    wanted = hashlib.sha256(source + version.encode() + _output([go, "version"]).encode())
    binary = CACHE / "go" / "sqs-workload"
    stamp = CACHE / "go" / STAMP
    with _locked("go"):
        if stamp.exists() and binary.exists() and stamp.read_text() == wanted.hexdigest():
            return binary
        binary.parent.mkdir(parents=True, exist_ok=True)
        environment = {**os.environ, "GO111MODULE": "off", "GOPATH": str(GOPATH),
                       "GOFLAGS": "", "GOCACHE": str(CACHE / "go" / "cache")}
        _run([go, "build", "-ldflags", f"-X main.sdkVersion={version}", "-o", str(binary),
              str(GO_SOURCE)], "building the Go workload", env=environment)
        stamp.write_text(wanted.hexdigest())
    return binary


def go_sdk_version() -> str:
    """service/sqs's version, from the go_module_metadata.go Debian installs with it."""
    metadata = GO_SQS / "go_module_metadata.go"
    if not metadata.exists():
        raise SetupError(f"no {metadata}: install Debian's golang-github-aws-aws-sdk-go-v2-dev")
    for line in metadata.read_text().splitlines():
        if "goModuleVersion" in line and '"' in line:
            return line.split('"')[1]
    raise SetupError(f"no goModuleVersion in {metadata}")


def ruby_ready() -> str:
    """The ruby interpreter, once it has shown it can load the v1 SDK's AWS::SQS."""
    ruby = shutil.which("ruby")
    if ruby is None:
        raise SetupError("ruby must be on PATH for the Ruby client (Debian: ruby)")
    _run([ruby, "-e", 'require "aws-sdk"; AWS::SQS::Client'],
         "loading AWS::SQS (Debian: ruby-aws-sdk)")
    return ruby


@contextlib.contextmanager
def _locked(name: str) -> Iterator[None]:
    """Hold CACHE/<name>.lock while installing `name` (released when the file closes,
    also if this process dies)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with (CACHE / f"{name}.lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _output(command: list[str]) -> str:
    try:
        return subprocess.run(command, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as failure:
        raise SetupError(f"{' '.join(command)}: {failure}") from failure


def _run(command: list[str], what: str, cwd: Path | None = None,
         env: dict[str, str] | None = None) -> None:
    try:
        done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=INSTALL_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as failure:
        raise SetupError(f"{what}: {failure}") from failure
    if done.returncode != 0:
        raise SetupError(f"{what} failed ({done.returncode}):\n{done.stdout[-3000:]}"
                         f"\n{done.stderr[-3000:]}")
