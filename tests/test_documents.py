"""The repository explains itself: ARCHITECTURE.md is in it and nothing cites a design
file outside it; no module grows past what one reader takes in (600 lines)."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LONGEST_MODULE = 600
# What once pointed outside the repository: the design notes kept beside it.
OUTSIDE = ("DESIGN.md", "shared/SQS-NOTES.md", "../shared/")


def tracked() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return [ROOT / name for name in listed if (ROOT / name).is_file()]


def test_the_architecture_is_in_the_repository() -> None:
    text = (ROOT / "ARCHITECTURE.md").read_text()
    for section in ("## The rooms and their arrows", "## The seam", "## SQL conventions",
                    "## How a request flows", "## Where to add"):
        assert section in text, section


def test_nothing_cites_a_design_file_outside_the_repository() -> None:
    citing = []
    for path in tracked():
        if path.suffix not in {".py", ".md", ".toml", ".sql", ".txt", ".cfg"}:
            continue
        if path == Path(__file__).resolve():
            continue
        text = path.read_text(errors="replace")
        citing += [f"{path.relative_to(ROOT)}: {name}" for name in OUTSIDE if name in text]
    assert not citing, "\n".join(citing)


def test_no_module_is_longer_than_600_lines() -> None:
    long = []
    for path in sorted((ROOT / "server" / "hopper").rglob("*.py")):
        lines = len(path.read_text().splitlines())
        if lines > LONGEST_MODULE:
            long.append(f"{path.relative_to(ROOT)}: {lines} lines")
    assert not long, "\n".join(long)
