"""`python -m conformance`: run every scenario on moto and on hopper, compare, report.

Prints one line per scenario and store, the differences that are not in
known_differences.toml (or pending_fixes.toml), and per store the summary line
`N scenarios: S same, K known differences, P pending hopper fixes, U unexpected`.
Exits 1 on any unexpected difference (or a server that would not start), 0 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from conformance import coverage, known, run, servers
from conformance.registry import SCENARIOS, Scenario
from conformance.scenarios import load_all


def main(argv: list[str] | None = None) -> int:
    options = _parser().parse_args(argv)
    load_all()
    chosen = _chosen(options.only)
    if not chosen:
        print(f"conformance: no scenario matches {options.only!r}", file=sys.stderr)
        return 2
    stores = ["memory", "postgres"] if options.store == "both" else [options.store]
    entries = known.load() + known.load_pending()
    try:
        return _run(chosen, stores, entries, options)
    except servers.ServerError as failure:
        print(f"conformance: {failure}", file=sys.stderr)
        return 1


def _run(chosen: list[Scenario], stores: list[str], entries: list[known.KnownDifference],
         options: argparse.Namespace) -> int:
    with servers.moto_server() as endpoint:
        moto = run.record("moto", endpoint, chosen)
    used: set[int] = set()
    summaries = []
    for store in stores:
        with servers.hopper_server(store) as endpoint:
            hopper = run.record(f"hopper-{store}", endpoint, chosen)
        outcomes = run.judge(store, hopper, moto, entries, used)
        gaps = coverage.missing(list(hopper.values()))
        print(f"hopper ({store} store) against moto:")
        for outcome in outcomes:
            print("\n".join(run.report_lines(outcome, options.verbose)))
        summaries.append((store, outcomes, gaps))
    stale = [] if options.only else [
        f"{entry.scenario} {entry.path}" for index, entry in enumerate(entries)
        if index not in used
    ]
    for line in stale:
        print(f"stale known difference: {line}")
    for store, outcomes, gaps in summaries:
        print(f"{store}: {run.summary(outcomes)}")
        for protocol, names in gaps.items():
            if names and not options.only:
                print(f"{store}: no {protocol} scenario calls {', '.join(names)}")
    if options.report:
        _write_report(options.report, summaries, stale)
    unexpected = any(o.unexpected for _, outcomes, _ in summaries for o in outcomes)
    return 1 if unexpected else 0


def _write_report(path: Path, summaries: list[Any], stale: list[str]) -> None:
    """The run as JSON, for tests/conformance: per store its summary, its unexpected
    differences and the actions no scenario calls; the stale known differences."""
    report = {
        "stores": {
            store: {
                "summary": run.summary(outcomes),
                "unexpected": {
                    o.scenario: [d.describe() for d in o.unexpected]
                    for o in outcomes if o.unexpected
                },
                "pending": sorted({
                    entry.reason for o in outcomes for _, entry in o.known if entry.pending
                }),
                "uncalled": gaps,
            }
            for store, outcomes, gaps in summaries
        },
        "stale": stale,
    }
    path.write_text(json.dumps(report, indent=2), encoding="utf-8")


def _chosen(only: list[str] | None) -> list[Scenario]:
    if not only:
        return list(SCENARIOS.values())
    return [s for s in SCENARIOS.values() if any(part in s.name for part in only)]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m conformance", description=__doc__)
    parser.add_argument("--store", choices=["memory", "postgres", "both"], default="both")
    parser.add_argument("--only", action="append", metavar="NAME",
                        help="run the scenarios whose name contains NAME (repeatable)")
    parser.add_argument("--verbose", action="store_true",
                        help="also print the known differences of each scenario")
    parser.add_argument("--report", type=Path, metavar="FILE",
                        help="also write the outcome as JSON to FILE")
    return parser


if __name__ == "__main__":
    sys.exit(main())
