"""The scenario registry: `@scenario` records a function under its own name.

A scenario is a function `(Target) -> list[Answer]`: it makes a few calls through the
target (each call records its answer) and returns `target.answers`. One behaviour per
scenario, named as a sentence, so that a difference names what differs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from conformance.target import Target

ScenarioFunction = Callable[["Target"], list[dict[str, Any]]]


@dataclass(frozen=True)
class Scenario:
    name: str
    run: ScenarioFunction
    doc: str


SCENARIOS: dict[str, Scenario] = {}


def scenario(function: ScenarioFunction) -> ScenarioFunction:
    """Register `function` under its name; names are unique across all modules."""
    name = function.__name__
    if name in SCENARIOS:
        raise ValueError(f"two scenarios are named {name}")
    SCENARIOS[name] = Scenario(name, function, (function.__doc__ or "").strip())
    return function
