"""The compiled modules (setup.py, hopper/native.py): a build compiles all of the listed
modules or none, CI's build compiles them, and a source edited after its compiled module
was built is found, since Python would run the compiled one instead."""

from __future__ import annotations

import importlib
import os
import tomllib
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

from hopper import native

ROOT = Path(__file__).resolve().parent.parent


def listed() -> list[str]:
    with open(ROOT / "pyproject.toml", "rb") as file:
        names: list[str] = tomllib.load(file)["tool"]["hopper"]["compiled"]
    return names


def runs_compiled(name: str) -> bool:
    path = importlib.import_module(name).__file__ or ""
    return path.endswith(tuple(EXTENSION_SUFFIXES))


def test_a_build_compiles_every_listed_module_or_none() -> None:
    compiled = [name for name in listed() if runs_compiled(name)]
    assert compiled in ([], listed())


def test_the_listed_modules_run_compiled_in_ci_unless_pure_python_was_asked() -> None:
    # CI's machine has a C compiler (.ci/run sets CI): a build that fell back to pure
    # Python there would lose the compiled modules' gain without a word.
    if not os.environ.get("CI") or os.environ.get("HOPPER_PURE_PYTHON", "") not in ("", "0"):
        return
    assert [name for name in listed() if not runs_compiled(name)] == []


def tree(tmp_path: Path, *, source_tree: bool = True) -> Path:
    """A package with one module compiled beside its source."""
    if source_tree:
        (tmp_path / "setup.py").write_text("")
    package = tmp_path / "server" / "hopper"
    package.mkdir(parents=True)
    (package / "protocol.py").write_text("")
    (package / f"protocol{EXTENSION_SUFFIXES[0]}").write_bytes(b"")
    (package / "plain.py").write_text("")
    return package


def touch(path: Path, when: float) -> None:
    os.utime(path, (when, when))


def test_a_source_edited_after_its_compiled_module_is_stale(tmp_path: Path) -> None:
    package = tree(tmp_path)
    touch(package / f"protocol{EXTENSION_SUFFIXES[0]}", 1_000.0)
    touch(package / "protocol.py", 2_000.0)

    assert native.compiled(package) == [package / "protocol.py"]
    assert native.stale(package) == [package / "protocol.py"]


def test_a_compiled_module_built_after_its_source_is_not_stale(tmp_path: Path) -> None:
    package = tree(tmp_path)
    touch(package / "protocol.py", 1_000.0)
    touch(package / f"protocol{EXTENSION_SUFFIXES[0]}", 2_000.0)

    assert native.stale(package) == []


def test_an_installed_package_is_never_stale(tmp_path: Path) -> None:
    # a wheel's files take the time they were unpacked, in no particular order
    package = tree(tmp_path, source_tree=False)
    touch(package / f"protocol{EXTENSION_SUFFIXES[0]}", 1_000.0)
    touch(package / "protocol.py", 2_000.0)

    assert native.stale(package) == []


def test_this_tree_holds_no_stale_compiled_module() -> None:
    assert native.stale() == []
