"""The layers of DESIGN.md hold: `lint-imports` checks the contracts in pyproject.toml.

A wrong-way import (the core reaching for a store, a store for the wire, the wire for
asyncpg) fails this test, so it fails CI.
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
    # all three contracts were checked, none skipped
    assert "4 kept, 0 broken" in run.stdout, run.stdout
