"""The one table the benchmark prints: a row per figure, a column per target, then
hopper's ratios to LocalStack (the fastest peer we can run) and the Postgres store's
goal with its verdict."""

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
)
PEER = "localstack"


@dataclass(frozen=True)
class Goal:
    """The Postgres store's goal for a row: `threshold` for its value, or with
    `of_peer` for its ratio to LocalStack's value."""

    threshold: float
    of_peer: bool = False


@dataclass(frozen=True)
class Row:
    """One figure: its label, whether more is better, the Postgres goal (None: none)
    and the value per target name."""

    label: str
    higher_is_better: bool
    goal: Goal | None
    values: dict[str, float]


def render(rows: list[Row], notes: list[str]) -> str:
    header = ["", *TARGETS, f"memory/{PEER}", f"postgres/{PEER}", "postgres goal"]
    lines = [header] + [_cells(row) for row in rows]
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
    """Each goal row's label and whether the Postgres store met it (rows not measured
    left out)."""
    found = []
    for row in rows:
        met = _met(row)
        if met is not None:
            found.append((row.label, met))
    return found


def _cells(row: Row) -> list[str]:
    values = [_number(row.values.get(name, math.nan)) for name in TARGETS]
    ratios = [_ratio(row, name) for name in TARGETS[:2]]
    return [row.label, *values, *(_times(r) for r in ratios), _verdict(row)]


def _ratio(row: Row, name: str) -> float:
    value, peer = row.values.get(name, math.nan), row.values.get(PEER, math.nan)
    if math.isnan(value) or math.isnan(peer) or peer == 0:
        return math.nan
    return value / peer


def _number(value: float) -> str:
    if math.isnan(value):
        return "-"
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}"


def _times(ratio: float) -> str:
    return "-" if math.isnan(ratio) else f"{ratio:,.2f}x"


def _met(row: Row) -> bool | None:
    if row.goal is None:
        return None
    value = (
        _ratio(row, "hopper-postgres")
        if row.goal.of_peer
        else row.values.get("hopper-postgres", math.nan)
    )
    if math.isnan(value):
        return None
    return value >= row.goal.threshold if row.higher_is_better else value <= row.goal.threshold


def _verdict(row: Row) -> str:
    if row.goal is None:
        return ""
    sign = ">=" if row.higher_is_better else "<="
    suffix = f"x {PEER}" if row.goal.of_peer else ""
    threshold = f"{sign} {row.goal.threshold:,g}{suffix}"
    met = _met(row)
    if met is None:
        return threshold
    return f"{threshold} {'met' if met else 'MISSED'}"
