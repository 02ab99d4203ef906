"""hopper's build: the hot modules compiled with mypyc where it can, pure Python where not.

pyproject.toml holds everything else; this file only adds the compiled modules, listed
in pyproject.toml's `[tool.hopper] compiled` (tests/test_native.py reads it too).
Every compiled module is also shipped as its `.py`, so a build that cannot compile is
still a whole hopper, only slower:

- `HOPPER_PURE_PYTHON=1` (any non-empty value but 0) builds no extension at all;
- without mypyc (the `mypy` build requirement), or when mypy finds an error, the build
  warns and goes on in pure Python;
- without a working C compiler (no gcc, no Python headers, `CC=false`) the compile
  fails, the build warns, drops every compiled module (never half of them: they share
  one library) and goes on in pure Python.

An editable install (`pip install -e .`, PEP 660) compiles into the build directory and
copies the `.so` files beside their sources in `server/`, where Python prefers them to
the `.py`. So that an edit is never shadowed by an old `.so`, every editable build first
removes the tree's compiled modules (a pure build leaves none), and hopper/native.py
finds any that is older than its source (the suite refuses to run, `hopper serve`
warns).
"""

from __future__ import annotations

import os
import sys
import tomllib
from pathlib import Path
from typing import Any

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.editable_wheel import editable_wheel

ROOT = Path(__file__).parent
SOURCES = ROOT / "server"
# mypyc's shared library of the compiled modules: SOURCES/hopper_native__mypyc.*.so
GROUP = "hopper_native"


def say(text: str) -> None:
    print(f"hopper build: {text}", file=sys.stderr)


def compiled_modules() -> list[str]:
    """The modules pyproject.toml names to compile, as paths under server/."""
    with open(ROOT / "pyproject.toml", "rb") as file:
        names: list[str] = tomllib.load(file)["tool"]["hopper"]["compiled"]
    paths = [name.replace(".", "/") for name in names]
    return [f"{path}/__init__.py" if (SOURCES / path).is_dir() else f"{path}.py" for path in paths]


def pure_python_asked() -> bool:
    return os.environ.get("HOPPER_PURE_PYTHON", "") not in ("", "0")


# mypyc checks the compiled modules (and what they import) as mypy does, strictly. In
# pip's isolated build environment the third-party packages may be installed or not (a
# fresh venv gets them only after the build): mypy is told not to look for them, so
# their types are always Any and the build is the same whatever the venv holds, and the
# strict checks that only hold with their real types (no Any returned or subclassed, no
# ignore left unused, no untyped decorator) are off here; `mypy` itself keeps them.
THIRD_PARTY_AS_ANY = [
    "--no-site-packages",
    "--no-warn-return-any",
    "--allow-subclassing-any",
    "--no-warn-unused-ignores",
    "--allow-untyped-decorators",
]


def extensions() -> list[Any]:
    """mypyc's extensions for the compiled modules, or none when it cannot make them."""
    if pure_python_asked():
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        say("mypyc is not installed: pure Python, nothing compiled")
        return []
    # mypy reads pyproject.toml's [tool.mypy] (mypy_path = server); third-party types
    # are Any here (THIRD_PARTY_AS_ANY: the compiled code checks them at run time as it
    # checks any Any).
    try:
        return list(mypycify(
            ["--ignore-missing-imports", *THIRD_PARTY_AS_ANY,
             *(f"server/{path}" for path in compiled_modules())],
            opt_level="3", group_name=GROUP,
        ))
    except (Exception, SystemExit) as error:  # mypy exits on a type error
        say(f"mypyc could not compile ({type(error).__name__}: {error}): pure Python,"
            " nothing compiled")
        return []


class OptionalBuildExt(build_ext):
    """build_ext that runs mypyc only when the extensions are built (not for each of
    pip's metadata steps, which run this file too), and falls back to pure Python when
    mypyc or the C compile fails."""

    def finalize_options(self) -> None:
        self.distribution.ext_modules = extensions()
        super().finalize_options()

    def run(self) -> None:
        if not self.extensions:
            return
        try:
            super().run()
        except Exception as error:  # CompileError, LinkError, PlatformError, OSError
            say(f"the C compile failed ({type(error).__name__}: {str(error)[:120]}...):"
                " pure Python, nothing compiled")
            for built in self.get_outputs():
                Path(built).unlink(missing_ok=True)
            self.extensions = []
            self.distribution.ext_modules = []


def compiled_in_tree() -> list[Path]:
    """The `.so` files an earlier editable build copied beside the sources."""
    return [*SOURCES.glob(f"{GROUP}__mypyc.*"), *(SOURCES / "hopper").rglob("*.so"),
            *(SOURCES / "hopper").rglob("*.pyd")]


class CleanEditableWheel(editable_wheel):
    """An editable build starts from a tree without compiled modules: an old `.so`
    would otherwise stay beside its source (a pure build copies none in)."""

    def run(self) -> None:
        for stale in compiled_in_tree():
            stale.unlink()
        super().run()


# A stand-in until build_ext runs mypyc: it makes setuptools run build_ext at all, and
# tags the wheel for this platform.
PLACEHOLDER = [Extension(f"{GROUP}__mypyc", sources=[])]

if pure_python_asked():
    say("HOPPER_PURE_PYTHON is set: pure Python, nothing compiled")

setup(
    ext_modules=[] if pure_python_asked() else PLACEHOLDER,
    cmdclass={"build_ext": OptionalBuildExt, "editable_wheel": CleanEditableWheel},
)
