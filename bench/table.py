"""The one table the benchmark prints: a row per figure, a column per target, then
hopper's ratios to moto and the Postgres target with its verdict."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Row:
    """One figure: its label, whether more is better, the Postgres target (None: no
    target) and the value per target name."""

    label: str
    higher_is_better: bool
    goal: float | None
    values: dict[str, float]


TARGETS = ("hopper-memory", "hopper-postgres", "hopper-jetstream", "moto")


def render(rows: list[Row], notes: list[str]) -> str:
    header = ["", *TARGETS, "memory/moto", "postgres/moto", "postgres target"]
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


def _cells(row: Row) -> list[str]:
    values = [_number(row.values.get(name, math.nan)) for name in TARGETS]
    moto = row.values.get("moto", math.nan)
    ratios = [_ratio(row.values.get(name, math.nan), moto) for name in TARGETS[:2]]
    return [row.label, *values, *ratios, _verdict(row)]


def _number(value: float) -> str:
    if math.isnan(value):
        return "-"
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}"


def _ratio(value: float, moto: float) -> str:
    if math.isnan(value) or math.isnan(moto) or moto == 0:
        return "-"
    return f"{value / moto:,.2f}x"


def _verdict(row: Row) -> str:
    if row.goal is None:
        return ""
    sign = ">=" if row.higher_is_better else "<="
    value = row.values.get("hopper-postgres", math.nan)
    if math.isnan(value):
        return f"{sign} {row.goal:,.0f}"
    met = value >= row.goal if row.higher_is_better else value <= row.goal
    return f"{sign} {row.goal:,.0f} {'met' if met else 'MISSED'}"
