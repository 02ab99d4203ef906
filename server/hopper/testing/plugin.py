"""The pytest plugin of hopper.testing (entry point `pytest11`: loaded by every pytest
run in an environment where hopper is installed, so it defines fixtures, one option and
one marker, and imports nothing else until a test asks for a server).

- `hopper_server`: one HopperServer for the whole session, emptied (`reset()`) before
  each test that uses it, unless the test is marked `@pytest.mark.hopper_keep` or the
  run was given `--hopper-no-reset`.
- `hopper_session_server`: the same server, never reset (for session-scoped fixtures).
- `--hopper-database-url URL` (or the ini option `hopper_database_url`): run it on
  PostgreSQL instead of in memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("hopper", "hopper SQS server (hopper.testing)")
    group.addoption(
        "--hopper-database-url", metavar="URL", default=None,
        help="run the hopper_server fixture's server on this PostgreSQL (default: in memory)",
    )
    group.addoption(
        "--hopper-no-reset", action="store_true", default=False,
        help="do not empty the hopper_server fixture's server between tests",
    )
    parser.addini("hopper_database_url", "PostgreSQL for the hopper_server fixture's server")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "hopper_keep: the hopper_server fixture keeps what earlier tests left (no reset)",
    )


@pytest.fixture(scope="session")
def hopper_session_server(pytestconfig: pytest.Config) -> Iterator[Any]:
    """One hopper for the session (in memory unless --hopper-database-url), never reset."""
    from hopper.testing import HopperServer

    url = pytestconfig.getoption("hopper_database_url") or pytestconfig.getini(
        "hopper_database_url") or None
    with HopperServer(database_url=url) as server:
        yield server


@pytest.fixture
def hopper_server(hopper_session_server: Any, request: pytest.FixtureRequest) -> Any:
    """The session's hopper, emptied before this test (see the module's docstring)."""
    keep = request.node.get_closest_marker("hopper_keep") is not None
    if not keep and not request.config.getoption("hopper_no_reset"):
        hopper_session_server.reset()
    return hopper_session_server
