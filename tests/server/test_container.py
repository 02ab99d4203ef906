"""The container image's steps, run without a Docker engine: build the wheel, install
it into a clean virtualenv, start `hopper serve` from there and probe /health with the
Dockerfile's own HEALTHCHECK command. The Dockerfile runs nothing this test does not."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import httpx

from .processes import HopperProcess, free_port, wait_until_healthy

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = (REPO / "Dockerfile").read_text()
# Building and installing from PyPI takes a while on a cold cache.
INSTALL_TIMEOUT = 600


def run(*command: str | Path, cwd: Path) -> None:
    done = subprocess.run(
        [str(part) for part in command], cwd=cwd, env=_clean_environment(),
        capture_output=True, text=True, timeout=INSTALL_TIMEOUT,
    )
    assert done.returncode == 0, f"{command} failed:\n{done.stdout}\n{done.stderr}"


def _clean_environment() -> dict[str, str]:
    # Nothing of this checkout or of the test session may leak into the virtualenv.
    return {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("HOPPER_", "PYTHON", "VIRTUAL_ENV", "PROMETHEUS_"))
    }


def test_the_dockerfile_builds_from_the_wheel_and_runs_hopper_as_a_non_root_user() -> None:
    assert re.search(r"^FROM python:3\.\d+-slim\b", DOCKERFILE, re.MULTILINE)
    assert "pip wheel --no-deps" in DOCKERFILE
    assert re.search(r"^USER hopper$", DOCKERFILE, re.MULTILINE)
    assert re.search(r"^EXPOSE 9324$", DOCKERFILE, re.MULTILINE)
    assert re.search(r"^HEALTHCHECK .*", DOCKERFILE, re.MULTILINE)
    assert "/health" in DOCKERFILE
    assert 'ENTRYPOINT ["hopper"]' in DOCKERFILE
    assert 'CMD ["serve", "--host", "0.0.0.0", "--port", "9324"]' in DOCKERFILE


def test_the_wheel_in_a_clean_virtualenv_serves_and_passes_the_healthcheck(
    tmp_path: Path,
) -> None:
    # The build context, as the Dockerfile copies it.
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    shutil.copytree(REPO / "server", source / "server", ignore=_build_leftovers)
    wheels = tmp_path / "wheels"
    run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--wheel-dir", wheels, ".",
        cwd=source)
    [wheel] = wheels.glob("hopper_sqs-*.whl")
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", venv, cwd=tmp_path)
    run(venv / "bin" / "pip", "install", "-q", f"{wheel}[fast]", cwd=tmp_path)

    server = _serve(venv / "bin" / "hopper", tmp_path)
    try:
        _healthcheck(venv / "bin" / "python", server.url, tmp_path)
        # Package data came along: the dashboard's files and the SQL.
        assert httpx.get(f"{server.url}/dashboard/static/dashboard.js").status_code == 200
        assert httpx.get(f"{server.url}/metrics").status_code == 200
    finally:
        code = server.stop()
    assert code == 0, server.output()


def _serve(hopper: Path, scratch: Path) -> HopperProcess:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = scratch / "hopper.log"
    with log.open("ab") as output:
        process = subprocess.Popen(
            [str(hopper), "serve", "--host", "127.0.0.1", "--port", str(port)],
            cwd=scratch, env=_clean_environment(), stdout=output, stderr=subprocess.STDOUT,
        )
    wait_until_healthy(process, url, log)
    return HopperProcess(process, url, log)


def _healthcheck(python: Path, url: str, scratch: Path) -> None:
    """The Dockerfile's HEALTHCHECK command, pointed at this server's port."""
    [command] = re.findall(r'CMD \["python", "-c", "(.*)"\]\n', DOCKERFILE)
    port = url.rsplit(":", 1)[1]
    run(python, "-c", command.replace("9324", port), cwd=scratch)


def _build_leftovers(directory: str, names: list[str]) -> list[str]:
    # and a developer's compiled modules (setup.py), built for this machine, not the image
    return [n for n in names if n == "__pycache__" or n.endswith((".egg-info", ".so"))]
