"""LocalStack as a benchmark target: a virtualenv of its own, made once under
~/.cache/hopper-bench with pyenv's Python 3.13 (localstack-core 4.14 needs >= 3.12,
hopper's own venv may be older), and the command and environment that start its SQS
in-process on one port.

The venv is kept: a second run starts at once. `HOPPER_BENCH_LOCALSTACK_PYTHON` names
another interpreter (>= 3.12) to build it with.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

VERSION = "4.14.0"
# base-runtime brings the gateway (rolo, hypercorn) without the other services' bulk.
# The pins are what resolves and starts from PyPI today: newer cbor2, cryptography and
# pyOpenSSL break LocalStack 4.14's imports.
REQUIREMENTS = [
    f"localstack-core[base-runtime]=={VERSION}",
    "cbor2<5.8",
    "cryptography<44",
    "pyopenssl<24.3",
    "service_identity",
]
CACHE = Path.home() / ".cache" / "hopper-bench"
VENV = CACHE / f"localstack-{VERSION}"
HEALTH_PATH = "/_localstack/health"


def python() -> Path:
    """The venv's interpreter, made (with LocalStack installed) when missing."""
    interpreter = VENV / "bin" / "python"
    if (VENV / ".complete").exists():
        return interpreter
    base = _base_python()
    print(f"bench: installing LocalStack {VERSION} into {VENV} (once)", file=sys.stderr)
    subprocess.run([base, "-m", "venv", "--clear", str(VENV)], check=True)
    subprocess.run(
        [str(interpreter), "-m", "pip", "install", "-q", *REQUIREMENTS],
        check=True,
    )
    (VENV / ".complete").touch()  # a half-made venv is made again next time
    return interpreter


def command(port: int) -> tuple[list[str], dict[str, str]]:
    """The command line and environment that serve LocalStack's SQS on 127.0.0.1:port."""
    env = {
        **os.environ,
        "GATEWAY_LISTEN": f"127.0.0.1:{port}",
        "SERVICES": "sqs",
        "EAGER_SERVICE_LOADING": "1",
        "DISABLE_EVENTS": "1",
        "SKIP_SSL_CERT_DOWNLOAD": "1",
        "DNS_ADDRESS": "0",
        "LOCALSTACK_HOST": f"127.0.0.1:{port}",
        "SQS_ENDPOINT_STRATEGY": "path",
        # No log line per request: hopper and moto run without an access log too.
        "LS_LOG": "warn",
    }
    env.pop("PYTHONPATH", None)  # hopper's source tree means nothing to it
    return [str(python()), "-m", "localstack.runtime.main"], env


def _base_python() -> str:
    chosen = os.environ.get("HOPPER_BENCH_LOCALSTACK_PYTHON")
    if chosen:
        return chosen
    for root in (Path(os.environ.get("PYENV_ROOT", "~/.pyenv")).expanduser(), Path("/root/.pyenv")):
        found = sorted((root / "versions").glob("3.1[3-9]*/bin/python3"))
        if found:
            return str(found[-1])
    if sys.version_info >= (3, 12):
        return sys.executable
    raise RuntimeError(
        "LocalStack needs Python >= 3.12: install one with pyenv or name it in "
        "HOPPER_BENCH_LOCALSTACK_PYTHON"
    )
