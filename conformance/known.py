"""known_differences.toml: the reviewed differences, each with its reason; and
pending_fixes.toml: differences where hopper is wrong about AWS, reported and awaiting
their fix (counted apart, printed on every run, never "known").

An entry matches a difference when its `scenario` and `path` match (shell-style
patterns, `fnmatch`) and, where given, `hopper` and `moto` match the two values
(a string is a pattern over the value's text; `"<absent>"` is a missing field).
`stores` (optional) limits an entry to some hopper stores. Every entry must say
`reason`; an entry that matches nothing in a full run is reported as stale.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from conformance.compare import Difference

KNOWN_FILE = Path(__file__).with_name("known_differences.toml")
PENDING_FILE = Path(__file__).with_name("pending_fixes.toml")


@dataclass(frozen=True)
class KnownDifference:
    scenario: str
    path: str
    reason: str
    hopper: str | None = None
    moto: str | None = None
    stores: tuple[str, ...] = ()
    pending: bool = False  # hopper is wrong here: a reported fix, not a difference

    def matches(self, scenario: str, store: str, difference: Difference) -> bool:
        return (
            fnmatchcase(scenario, self.scenario)
            and fnmatchcase(difference.path, self.path)
            and (not self.stores or store in self.stores)
            and _value_matches(self.hopper, difference.hopper)
            and _value_matches(self.moto, difference.moto)
        )


def load(path: Path = KNOWN_FILE) -> list[KnownDifference]:
    """The entries of `path`; raises ValueError on an entry without a reason."""
    return _entries(path, "difference", pending=False)


def load_pending(path: Path = PENDING_FILE) -> list[KnownDifference]:
    """The pending fixes of `path` (absent file: none)."""
    return _entries(path, "pending", pending=True) if path.exists() else []


def _entries(path: Path, table: str, *, pending: bool) -> list[KnownDifference]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    entries = []
    for number, raw in enumerate(data.get(table, []), start=1):
        if not str(raw.get("reason", "")).strip():
            raise ValueError(f"{path.name}: difference #{number} has no reason")
        entries.append(
            KnownDifference(
                scenario=raw["scenario"],
                path=raw["path"],
                reason=raw["reason"],
                hopper=raw.get("hopper"),
                moto=raw.get("moto"),
                stores=tuple(raw.get("stores", ())),
                pending=pending,
            )
        )
    return entries


def _value_matches(pattern: str | None, value: Any) -> bool:
    if pattern is None:
        return True
    return fnmatchcase(value if isinstance(value, str) else repr(value), pattern)
