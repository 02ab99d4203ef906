"""The one table the benchmark prints: a row per figure, a column per target, then
hopper's ratios to LocalStack (the fastest peer we can run) and the goals with their
verdicts. CPU rows come twice: in microseconds, and in floors (the CPU of one request
to the floor server measured in the same run), the unit the CPU goals are set in so
that they hold on any machine."""

from __future__ import annotations

import math
from dataclasses import dataclass

TARGETS = (
    "hopper-memory",
    "hopper-postgres",
    "hopper-jetstream",
    "hopper-jetstream-r3",
    "moto",
    "localstack",
    "floor",
    # the HTTP layer's comparison (hopper in memory on other HTTP servers)
    "hopper-asgi",
    "hopper-granian",
    "hopper-rsgi",
)
# The HTTP layer's comparison targets run only when named (granian is no dependency).
COMPARISONS = ("hopper-asgi", "hopper-granian", "hopper-rsgi")
DEFAULT_TARGETS = tuple(name for name in TARGETS if name not in COMPARISONS)
PEER = "localstack"
SHORT = {"hopper-postgres": "postgres", "hopper-memory": "memory"}


@dataclass(frozen=True)
class Goal:
    """A goal for one target's figure in a row (the Postgres store's unless `target`
    says): `threshold` for its value, or with `of_peer` for its ratio to LocalStack's
    value."""

    threshold: float
    of_peer: bool = False
    target: str = "hopper-postgres"


@dataclass(frozen=True)
class Row:
    """One figure: its label, whether more is better, its goals (none: no goal) and
    the value per target name."""

    label: str
    higher_is_better: bool
    goals: tuple[Goal, ...]
    values: dict[str, float]


def render(rows: list[Row], notes: list[str]) -> str:
    """The table, with a column for each target that has a figure in it."""
    shown = [name for name in TARGETS if any(name in row.values for row in rows)]
    header = ["", *shown, f"memory/{PEER}", f"postgres/{PEER}", "goals"]
    lines = [header] + [_cells(row, shown) for row in rows]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    text = [
        "  ".join(
            cell.ljust(w) if i == 0 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(line, widths, strict=True))
        )
        for line in lines
    ]
    text.insert(1, "-" * len(text[0]))
    return "\n".join(text + [""] + notes)


def verdicts(rows: list[Row]) -> list[tuple[str, bool]]:
    """Each goal's row label (with its target, when not the Postgres store) and whether
    it was met (goals not measured left out)."""
    found = []
    for row in rows:
        for goal in row.goals:
            met = _met(row, goal)
            if met is not None:
                found.append((_goal_label(row, goal), met))
    return found


def _goal_label(row: Row, goal: Goal) -> str:
    if goal.target == "hopper-postgres":
        return row.label
    return f"{row.label} ({SHORT.get(goal.target, goal.target)})"


def _cells(row: Row, shown: list[str]) -> list[str]:
    values = [_number(row.values.get(name, math.nan)) for name in shown]
    ratios = [_ratio(row, name) for name in ("hopper-memory", "hopper-postgres")]
    return [row.label, *values, *(_times(r) for r in ratios), _verdict(row)]


def _ratio(row: Row, name: str) -> float:
    value, peer = row.values.get(name, math.nan), row.values.get(PEER, math.nan)
    if math.isnan(value) or math.isnan(peer) or peer == 0:
        return math.nan
    return value / peer


def _number(value: float) -> str:
    if math.isnan(value):
        return "-"
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:,.1f}" if value >= 10 else f"{value:,.2f}"


def _times(ratio: float) -> str:
    return "-" if math.isnan(ratio) else f"{ratio:,.2f}x"


def _met(row: Row, goal: Goal) -> bool | None:
    value = _ratio(row, goal.target) if goal.of_peer else row.values.get(goal.target, math.nan)
    if math.isnan(value):
        return None
    return value >= goal.threshold if row.higher_is_better else value <= goal.threshold


def _verdict(row: Row) -> str:
    return "; ".join(_one_verdict(row, goal) for goal in row.goals)


def _one_verdict(row: Row, goal: Goal) -> str:
    sign = ">=" if row.higher_is_better else "<="
    suffix = f"x {PEER}" if goal.of_peer else ""
    threshold = f"{SHORT.get(goal.target, goal.target)} {sign} {goal.threshold:,g}{suffix}"
    met = _met(row, goal)
    if met is None:
        return threshold
    return f"{threshold} {'met' if met else 'MISSED'}"
