"""The rooms of ARCHITECTURE.md hold: `lint-imports` checks the contracts in pyproject.toml
(faces over adapters over the core; the stores independent of each other; no store nor
driver reached past the core; no web framework in the core).

A wrong-way import (the core reaching for a store, a store for the wire, the wire for
asyncpg, one store for another) fails this test, so it fails CI. The rules import-linter
cannot state (no cycle, no private name imported) are tests/test_imports.py.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_import_contracts_hold() -> None:
    lint_imports = Path(sys.executable).parent / "lint-imports"
    run = subprocess.run(
        [str(lint_imports), "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    # all four contracts were checked, none skipped
    assert "4 kept, 0 broken" in run.stdout, run.stdout
    assert "faces over adapters over the core KEPT" in run.stdout, run.stdout
