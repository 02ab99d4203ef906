"""`hopper serve` explains itself: every option's help names its environment variable
and default; a start that cannot succeed (a port in use, a declared queue the store
refuses) is one line on stderr and a non-zero exit, and "listening on" is said only
once the server listens. Each start here is a real `python -m hopper serve` process."""

from __future__ import annotations

import dataclasses
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from hopper.settings import Settings

from .conftest import store_options
from .processes import free_port, server_environment, start_hopper

EXIT_UNUSABLE = 2


def hopper(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hopper", *arguments], env=server_environment(),
        capture_output=True, text=True, timeout=60,
    )


def help_entries(text: str) -> dict[str, str]:
    """argparse's option list as flag -> its help text on one line."""
    entries: dict[str, str] = {}
    flag = None
    for line in text.splitlines():
        if line.startswith("  -"):
            flag = line.split()[0].rstrip(",")
            if flag == "-h":
                flag = "--help"
            entries[flag] = line
        elif flag is not None and line.startswith("    "):
            entries[flag] += line
        else:
            flag = None
    return {flag: " ".join(entry.split()) for flag, entry in entries.items()}


def test_serve_help_names_each_options_environment_variable_and_default():
    done = hopper("serve", "--help")
    assert done.returncode == 0, done.stderr
    entries = help_entries(done.stdout)
    settings = {f"--{spec.name.replace('_', '-')}": spec.name
                for spec in dataclasses.fields(Settings)}
    # Every setting is an option, and every option (but --help) is a setting.
    assert set(entries) - {"--help"} == set(settings)
    for flag, name in settings.items():
        assert f"[env HOPPER_{name.upper()}; default: " in entries[flag], entries[flag]
    assert "default: 9324]" in entries["--port"]
    assert "default: 127.0.0.1]" in entries["--host"]
    assert "default: the in-memory store]" in entries["--database-url"]


def test_migrate_help_names_its_environment_variables_too():
    entries = help_entries(hopper("migrate", "--help").stdout)
    assert "[env HOPPER_DATABASE_URL; default: " in entries["--database-url"]
    assert "[env HOPPER_DATABASE_SCHEMA; default: hopper]" in entries["--database-schema"]


@pytest.mark.parametrize("store", ["memory", "unreachable-postgres"])
def test_a_port_in_use_is_one_line_before_the_store_is_touched(store: str):
    # Given a port something else listens on
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        options = [] if store == "memory" else [
            # a database that would be a complaint of its own, were it tried first
            "--database-url", "postgresql://postgres@127.0.0.1:1/none"]
        # When hopper is started on it
        done = hopper("serve", "--port", str(port), *options)
    # Then it says so in one line, and nothing else, and exits non-zero
    assert done.returncode == EXIT_UNUSABLE, done.stderr
    assert done.stderr.splitlines() == [
        f"hopper: port {port} on 127.0.0.1 is in use: stop what listens there or choose"
        " another --port (HOPPER_PORT)"
    ]
    assert done.stdout == ""


def test_listening_is_said_once_the_server_has_started(tmp_path: Path):
    server = start_hopper(log=tmp_path / "hopper.log")
    try:
        lines = server.output().splitlines()
    finally:
        assert server.stop() == 0, server.output()
    listening = [n for n, line in enumerate(lines) if "listening on" in line]
    assert [lines[n] for n in listening] == [f"hopper: listening on {server.url}"]
    assert lines.index("Application startup complete.") < listening[0]


@pytest.mark.parametrize(
    ("store", "workers"), [("memory", 1), ("postgres", 1), ("postgres", 2)],
    ids=["memory", "postgres", "postgres-2-workers"],
)
def test_a_declaration_the_store_refuses_stops_start_up_with_one_line(
    tmp_path: Path, store: str, workers: int
):
    # Given a declared queue whose dead-letter queue does not exist (valid as a file;
    # refused only by the store, inside the server's start-up)
    config = tmp_path / "bad.toml"
    config.write_text(
        '[[queues]]\nname = "q"\ndead_letter = { queue = "missing", max_receive_count = 2 }\n'
    )
    # When hopper starts with it
    with store_options(store) as options:
        done = hopper("serve", "--port", str(free_port()), "--config", str(config),
                      "--workers", str(workers), *options)
    # Then the refusal is the last line, alone, and hopper exits non-zero
    lines = done.stderr.splitlines()
    assert done.returncode == EXIT_UNUSABLE, done.stderr
    assert lines[-1] == (
        "hopper: declared queue q: Invalid value for the parameter RedrivePolicy. Reason: "
        "Dead letter target does not exist."
    )
    assert "Traceback" not in done.stderr
    assert "listening on" not in done.stderr
    assert not [line for line in lines if "failed" in line.lower() or "error" in line.lower()]
