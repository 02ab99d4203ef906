"""Which of hopper's modules run compiled, and whether a developer's tree holds a
compiled module older than its source.

setup.py compiles the modules pyproject.toml lists under `[tool.hopper] compiled` with
mypyc when it can (a C extension beside each `.py`), and builds pure Python when it
cannot. An editable install (`pip install -e .`) copies the extensions beside the sources
in `server/hopper/`, and Python imports an extension before the `.py` of the same name:
a source edited after the install would run as it was when compiled, silently. So
`stale()` finds them; the test suite refuses to run with one (tests/conftest.py) and
`hopper serve` warns. This module itself is never compiled.
"""

from __future__ import annotations

from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent


def compiled(package: Path = PACKAGE) -> list[Path]:
    """The sources under `package` with a compiled module beside them (that runs instead)."""
    found = []
    for suffix in EXTENSION_SUFFIXES:
        for extension in package.rglob(f"*{suffix}"):
            source = extension.with_name(extension.name.removesuffix(suffix) + ".py")
            if source.exists():
                found.append(source)
    return sorted(found)


def stale(package: Path = PACKAGE) -> list[Path]:
    """The sources under `package` edited after their compiled module was built.

    Only in a source tree (setup.py beside server/): an installed wheel's files all take
    the time they were unpacked, in no particular order, and nobody edits them."""
    if not (package.parent.parent / "setup.py").exists():
        return []
    return [source for source in compiled(package) if _newer_than_extension(source)]


def _newer_than_extension(source: Path) -> bool:
    built = [
        extension.stat().st_mtime
        for suffix in EXTENSION_SUFFIXES
        if (extension := source.with_name(source.stem + suffix)).exists()
    ]
    return source.stat().st_mtime > min(built)
