"""The `slow` marker, given by where a test lives: `pytest -m "not slow"` is the quick
inner loop (the core, the wire, the contract suite on every store, the PostgreSQL store's
own statements); CI runs everything.

Slow are the tests that start live servers (tests/server/, which also drives the
browser), build and run SDK clients (tests/compat/), run the conformance comparison
(tests/conformance/) or the benchmark (tests/benchmark/), start NATS clusters and hopper
processes (tests/jetstream/, tests/postgres/test_processes.py), and drain 100,000
messages (tests/postgres/test_drain.py). A test module elsewhere that is slow says so
with `pytestmark = pytest.mark.slow`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hopper import native

HERE = Path(__file__).resolve().parent

SLOW_FOLDERS = {"server", "compat", "conformance", "benchmark", "jetstream"}
SLOW_MODULES = {"postgres/test_processes.py", "postgres/test_drain.py", "postgres/test_enqueue.py"}


def slow(path: Path) -> bool:
    where = path.resolve().relative_to(HERE)
    return where.parts[0] in SLOW_FOLDERS or where.as_posix() in SLOW_MODULES


def pytest_configure(config: pytest.Config) -> None:
    """Refuse to test a compiled module older than its source: Python would import the
    extension an editable install put beside it, and the edit would go untested."""
    stale = native.stale()
    if stale:
        names = ", ".join(str(source.relative_to(native.PACKAGE.parent)) for source in stale)
        raise pytest.UsageError(
            f"edited after they were compiled: {names}; compile them again with"
            " `pip install -e .`, or install pure Python with"
            " `HOPPER_PURE_PYTHON=1 pip install -e .`"
            " (README, 'Compiled modules (mypyc), for developers')"
        )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if slow(item.path):
            item.add_marker(pytest.mark.slow)
