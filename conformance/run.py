"""Recording scenarios on a server, and judging hopper's answers against moto's."""

from __future__ import annotations

import time
import traceback
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from conformance.compare import Difference, differences
from conformance.known import KnownDifference
from conformance.normalise import normalise
from conformance.registry import Scenario
from conformance.target import Target

# A whole recording is bounded too: scenarios after this are not run, and fail.
RECORD_TIMEOUT = 600.0

Answers = list[dict[str, Any]]


@dataclass
class Outcome:
    """One scenario on one hopper store, compared with moto."""

    scenario: str
    known: list[tuple[Difference, KnownDifference]] = field(default_factory=list)
    unexpected: list[Difference] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        if self.unexpected:
            return "unexpected"
        if any(entry.pending for _, entry in self.known):
            return "pending"
        return "known" if self.known else "same"


def record(target_name: str, endpoint: str, scenarios: Iterable[Scenario]) -> dict[str, Answers]:
    """Run every scenario on one server; its normalised answers by scenario name.
    A scenario that raises keeps what it recorded, then a `<crash>` answer."""
    deadline = time.monotonic() + RECORD_TIMEOUT
    recorded: dict[str, Answers] = {}
    for scenario in scenarios:
        if time.monotonic() > deadline:
            recorded[scenario.name] = [_crash(f"not run: {RECORD_TIMEOUT:.0f}s deadline passed")]
            continue
        target = Target(target_name, endpoint, scenario.name)
        try:
            answers = scenario.run(target)
        except Exception as failure:  # a crash is an answer to compare, not the end
            answers = target.answers + [_crash(_describe(failure))]
        finally:
            target.close()
        recorded[scenario.name] = normalise(answers)
    return recorded


def judge(
    store: str,
    hopper: dict[str, Answers],
    moto: dict[str, Answers],
    known: list[KnownDifference],
    used: set[int],
) -> list[Outcome]:
    """Compare scenario by scenario; each difference is known (an entry matches it:
    its index goes into `used`) or unexpected."""
    outcomes = []
    for name, answers in hopper.items():
        outcome = Outcome(name)
        for difference in differences(answers, moto[name]):
            entry = next(
                (i for i, k in enumerate(known) if k.matches(name, store, difference)), None
            )
            if entry is None:
                outcome.unexpected.append(difference)
            else:
                used.add(entry)
                outcome.known.append((difference, known[entry]))
        outcomes.append(outcome)
    return outcomes


def summary(outcomes: list[Outcome]) -> str:
    counts = {verdict: 0 for verdict in ("same", "known", "pending", "unexpected")}
    for outcome in outcomes:
        counts[outcome.verdict] += 1
    return (
        f"{len(outcomes)} scenarios: {counts['same']} same, "
        f"{counts['known']} known differences, {counts['pending']} pending hopper fixes, "
        f"{counts['unexpected']} unexpected"
    )


def report_lines(outcome: Outcome, verbose: bool) -> list[str]:
    """The per-scenario line, then its unexpected differences (and known ones if
    `verbose`)."""
    label = {"same": "same      ", "known": "known     ", "pending": "PENDING   ",
             "unexpected": "UNEXPECTED"}
    extra = f" ({len(outcome.known)} known)" if outcome.known else ""
    lines = [f"  {label[outcome.verdict]} {outcome.scenario}{extra}"]
    lines += [f"      {d.describe()}" for d in outcome.unexpected]
    reasons = dict.fromkeys(entry.reason for _, entry in outcome.known if entry.pending)
    lines += [f"      pending fix: {reason}" for reason in reasons]
    if verbose:
        lines += [f"      known: {d.describe()}" for d, _ in outcome.known]
    return lines


def _crash(text: str) -> dict[str, Any]:
    return {"op": "<crash>", "crash": text}


def _describe(failure: BaseException) -> str:
    where = traceback.extract_tb(failure.__traceback__)[-1:]
    place = f" at {where[0].name}:{where[0].lineno}" if where else ""
    return f"{type(failure).__name__}: {failure}{place}"
