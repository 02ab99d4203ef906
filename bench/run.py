"""`python -m bench`: start hopper (in memory, on PostgreSQL) and moto, measure each
with the same load generator, print one table of medians. See bench/README.md."""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections import defaultdict

from bench import workloads
from bench.table import TARGETS, Row, render
from bench.targets import Target, running_targets
from bench.workloads import Load, Measure

# The goals for the Postgres store on a 2-core machine, client alongside.
GOALS = {"send": 3_000, "batch": 15_000, "drain": 7_000, "p50": 5.0, "rss": 200.0}
PREFILL_CAP = 40_000
WORKLOADS = ("send", "batch", "drain", "latency")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        import uvloop

        uvloop.install()  # the leaner loop for the load generator too
    except ImportError:
        pass
    began = time.monotonic()
    with running_targets(args.targets) as targets:
        figures = asyncio.run(_measure(targets, args))
        rss = {t.name: t.peak_rss_mb() for t in targets}
    print(render(_rows(figures, rss), _notes(args, figures, began)))
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--seconds", type=float, default=5.0, help="length of one run")
    parser.add_argument("--runs", type=int, default=3, help="runs per workload and target")
    parser.add_argument("--clients", type=int, default=16, help="concurrent connections")
    parser.add_argument("--rate", type=float, default=500.0, help="latency send rate, msg/s")
    parser.add_argument("--targets", nargs="+", choices=TARGETS, default=list(TARGETS))
    parser.add_argument("--workloads", nargs="+", choices=WORKLOADS, default=list(WORKLOADS))
    return parser


Figures = dict[str, dict[str, list[Measure]]]  # workload -> target -> runs


async def _measure(targets: list[Target], args: argparse.Namespace) -> Figures:
    """Every workload, run by run, each run going round the targets in turn, so that
    noise from anything else on the machine falls on all targets alike."""
    figures: Figures = defaultdict(lambda: defaultdict(list))
    loads = {t.name: Load(t.port, args.clients, args.seconds) for t in targets}
    for workload in args.workloads:
        for run in range(args.runs):
            for name, load in loads.items():
                measure = await _one(workload, load, figures, name, args)
                figures[workload][name].append(measure)
                print(f"  {workload:8} run {run + 1} {name:16} {_brief(measure)}", file=sys.stderr)
    return figures


async def _one(
    workload: str, load: Load, figures: Figures, name: str, args: argparse.Namespace
) -> Measure:
    if workload == "send":
        return await workloads.send(load)
    if workload == "batch":
        return await workloads.send_batch(load)
    if workload == "drain":
        # About half a run's worth at this target's batch rate: the drain lasts a run or so.
        # (PREFILL_CAP when the batch workload was not run)
        batch_rate = _median(figures["batch"][name], "msg/s") if figures["batch"][name] else 1e9
        prefill = int(min(PREFILL_CAP, max(200, batch_rate * args.seconds / 2)))
        return await workloads.drain(load, prefill)
    return await workloads.latency(load, args.rate)


def _rows(figures: Figures, rss: dict[str, float]) -> list[Row]:
    def medians(workload: str, key: str) -> dict[str, float]:
        return {name: _median(runs, key) for name, runs in figures[workload].items()}

    return [
        Row("SendMessage, msg/s", True, GOALS["send"], medians("send", "msg/s")),
        Row("SendMessageBatch of 10, msg/s", True, GOALS["batch"], medians("batch", "msg/s")),
        Row("drain (receive 10 + delete), msg/s", True, GOALS["drain"], medians("drain", "msg/s")),
        Row("end-to-end p50, ms", False, GOALS["p50"], medians("latency", "p50 ms")),
        Row("end-to-end p99, ms", False, None, medians("latency", "p99 ms")),
        Row("server peak RSS (VmHWM), MB", False, GOALS["rss"], rss),
    ]


def _notes(args: argparse.Namespace, figures: Figures, began: float) -> list[str]:
    cpu = ", ".join(
        f"{w} {max(m.client_cpu for runs in by.values() for m in runs):.0f}%"
        for w, by in figures.items()
        if any(by.values())  # (workloads left out by --workloads have no runs)
    )
    short = [
        f"{name} received {m.values['received']:.0f}/{m.values['sent']:.0f}"
        for name, runs in figures["latency"].items()
        for m in runs
        if m.values["received"] < m.values["sent"]
    ]
    notes = [
        f"medians of {args.runs} runs x {args.seconds:g} s, {args.clients} clients, raw HTTP/1.1 "
        f"keep-alive, SQS JSON protocol; latency at {args.rate:g} msg/s with WaitTimeSeconds=20.",
        f"load generator CPU (max per workload, % of one core): {cpu}",
        f"whole benchmark took {time.monotonic() - began:.0f} s.",
    ]
    achieved = ", ".join(
        f"{name} {_median(runs, 'sent/s'):,.0f}" for name, runs in figures["latency"].items()
    )
    notes.append(f"latency runs' achieved send rate, msg/s (median): {achieved}")
    if short:
        notes.append("latency runs that lost messages: " + "; ".join(short))
    return notes


def _median(runs: list[Measure], key: str) -> float:
    return statistics.median(m.values[key] for m in runs) if runs else float("nan")


def _brief(measure: Measure) -> str:
    values = ", ".join(f"{k} {v:,.1f}" for k, v in measure.values.items())
    return f"{values} (client CPU {measure.client_cpu:.0f}%)"


if __name__ == "__main__":
    sys.exit(main())
