"""`python -m conformance`: run every scenario on moto and on hopper, compare, report.

Prints one line per scenario and store, the differences that are not in
known_differences.toml, and per store the summary line
`N scenarios: S same, K known differences, U unexpected`. Exits 1 on any unexpected
difference (or a server that would not start), 0 otherwise.
"""

from __future__ import annotations

import argparse
import sys

from conformance import known, run, servers
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
    entries = known.load()
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
        print(f"hopper ({store} store) against moto:")
        for outcome in outcomes:
            print("\n".join(run.report_lines(outcome, options.verbose)))
        summaries.append((store, outcomes))
    if not options.only:
        for index, entry in enumerate(entries):
            if index not in used:
                print(f"stale known difference: {entry.scenario} {entry.path}")
    for store, outcomes in summaries:
        print(f"{store}: {run.summary(outcomes)}")
    unexpected = any(o.unexpected for _, outcomes in summaries for o in outcomes)
    return 1 if unexpected else 0


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
    return parser


if __name__ == "__main__":
    sys.exit(main())
