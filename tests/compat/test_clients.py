"""Real clients, unmodified, against a live hopper (in-memory store): each test installs
its client if need be (compat/.venvs, compat/node/node_modules) and runs the compat
workload (compat/README.md). A client that cannot be installed fails; nothing skips."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

# The compat runner lives at the top of the repository, beside tests/: pytest puts the
# repository's root on sys.path (tests/ is a package), where `compat` names the runner
# and these tests are `tests.compat`.
from compat.clients import CLIENTS, Client
from compat.run import run_client

from tests.server.processes import HopperProcess, start_hopper


@pytest.fixture(scope="module")
def hopper() -> Iterator[HopperProcess]:
    """One hopper for every client, with AWS's timing rules (each workload uses queue
    names of its own); it must stop cleanly."""
    with tempfile.TemporaryDirectory() as scratch:
        server = start_hopper(log=Path(scratch) / "hopper.log")
        try:
            yield server
        finally:
            code = server.stop()
        assert code == 0, f"hopper exited with {code}:\n{server.output()}"


@pytest.mark.parametrize("client", CLIENTS, ids=[c.name for c in CLIENTS])
def test_client_runs_the_workload_against_hopper(hopper: HopperProcess, client: Client):
    result = run_client(client, hopper.url)
    # The server's side of a failure (its last requests) beside the client's.
    assert result.ok, f"{result.explain()}\n--- hopper ---\n{hopper.output()[-3000:]}"
    assert result.protocol == client.protocol, result.explain()
    assert tuple(result.gaps) == client.gaps, result.explain()
