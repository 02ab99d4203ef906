"""`python -m bench`: start hopper (in memory, on PostgreSQL, on JetStream), moto and
LocalStack, measure each with the same load generator, print one table of medians:
msg/s and the server's CPU per message. `python -m bench scale` draws the scale curves
instead (bench/scale.py). See bench/README.md."""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import statistics
import sys
import time
from collections import defaultdict

from bench import workloads
from bench.table import DEFAULT_TARGETS, TARGETS, Goal, Row, render, verdicts
from bench.targets import Target, running_targets
from bench.workloads import Load, Measure

# The goals (issue 28): msg/s as a multiple of LocalStack's, the server's CPU (process
# and database backends) per message in floors -- the floor server's CPU per request in
# the same run, so that they hold on any machine -- latency in ms, memory in MB. The
# Postgres store's unless the target is named.
PEER_MULTIPLE = 5.0
FLOOR = "floor"
CPU_GOALS = {
    "send": (Goal(1.2, target="hopper-memory"), Goal(2.2)),
    "batch": (Goal(0.55),),
    "drain": (Goal(1.1),),
}
P50_GOALS = (Goal(1.0, target="hopper-memory"), Goal(2.0))
RSS_GOAL = Goal(200.0)
# The floor answers a fixed body: it can be sent to, never drained or polled.
FLOOR_WORKLOADS = frozenset({"send"})
PREFILL_CAP = 40_000
WORKLOADS = ("send", "batch", "drain", "fifo-send", "fifo-batch", "fifo-drain", "latency")
LABELS = {
    "send": "SendMessage",
    "batch": "SendMessageBatch of 10",
    "drain": "drain (receive 10 + delete)",
    "fifo-send": "FIFO SendMessage",
    "fifo-batch": "FIFO SendMessageBatch of 10",
    "fifo-drain": "FIFO drain",
}


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["scale"]:
        from bench import scale

        return scale.main(argv[1:])
    args = _parser().parse_args(argv)
    try:
        import uvloop

        uvloop.install()  # the leaner loop for the load generator too
    except ImportError:
        pass
    began = time.monotonic()
    failures: list[str] = []
    with running_targets(args.targets) as targets:
        figures = asyncio.run(_measure(targets, args, failures))
        rss = {t.name: t.peak_rss_mb() for t in targets}
    rows = _rows(figures, rss)
    print(render(rows, _notes(args, figures, rows, began) + _failed(failures)))
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--seconds", type=float, default=5.0, help="length of one run")
    parser.add_argument("--runs", type=int, default=3, help="runs per workload and target")
    parser.add_argument("--clients", type=int, default=16, help="concurrent connections")
    parser.add_argument("--rate", type=float, default=500.0, help="latency send rate, msg/s")
    parser.add_argument(
        "--targets", nargs="+", choices=TARGETS, default=list(DEFAULT_TARGETS)
    )
    parser.add_argument(
        "--no-meter", action="store_true", help="do not measure the servers' CPU per message"
    )
    parser.add_argument("--workloads", nargs="+", choices=WORKLOADS, default=list(WORKLOADS))
    return parser


Figures = dict[str, dict[str, list[Measure]]]  # workload -> target -> runs


async def _measure(targets: list[Target], args: argparse.Namespace, failures: list[str]) -> Figures:
    """Every workload, run by run, each run going round the targets in turn, so that
    noise from anything else on the machine falls on all targets alike. A run a server
    fails (an error answer, a dropped connection) is left out of its medians and said
    in `failures`: one server's bug does not end the others' measurements."""
    figures: Figures = defaultdict(lambda: defaultdict(list))
    loads = {
        t.name: Load(t.port, args.clients, args.seconds, meter=None if args.no_meter else t.meter)
        for t in targets
    }
    try:
        for workload in args.workloads:
            for run in range(args.runs):
                for name, load in loads.items():
                    if name == FLOOR and workload not in FLOOR_WORKLOADS:
                        continue
                    try:
                        measure = await _one(workload, load, figures, name, args)
                    except (
                        workloads.RequestFailed,
                        workloads.WrongAnswer,
                        OSError,
                        EOFError,
                    ) as error:
                        failures.append(f"{name} {workload} run {run + 1}: {error}")
                        print(
                            f"  {workload:10} run {run + 1} {name:16} FAILED: {error}",
                            file=sys.stderr,
                        )
                        continue
                    figures[workload][name].append(measure)
                    print(
                        f"  {workload:10} run {run + 1} {name:16} {_brief(measure)}",
                        file=sys.stderr,
                    )
    finally:
        for target in targets:
            await target.meter.close()
    return figures


async def _one(
    workload: str, load: Load, figures: Figures, name: str, args: argparse.Namespace
) -> Measure:
    fifo = workload.startswith("fifo-")
    kind = workload.removeprefix("fifo-")
    if kind == "send":
        return await workloads.send(load, fifo)
    if kind == "batch":
        return await workloads.send_batch(load, fifo)
    if kind == "drain":
        # About half a run's worth at this target's batch rate: the drain lasts a run or so.
        # (PREFILL_CAP when the batch workload was not run)
        batches = figures[workload.replace("drain", "batch")][name]
        batch_rate = _median(batches, "msg/s") if batches else 1e9
        prefill = int(min(PREFILL_CAP, max(200, batch_rate * args.seconds / 2)))
        return await workloads.drain(load, prefill, fifo)
    return await workloads.latency(load, args.rate)


def _rows(figures: Figures, rss: dict[str, float]) -> list[Row]:
    def medians(workload: str, key: str) -> dict[str, float]:
        return {name: _median(runs, key) for name, runs in figures[workload].items()}

    floor = medians("send", "us/msg").get(FLOOR, math.nan)
    rows = []
    for workload, label in LABELS.items():
        peer = (Goal(PEER_MULTIPLE, of_peer=True),)
        rows.append(Row(f"{label}, msg/s", True, peer, medians(workload, "msg/s")))
        cpu = medians(workload, "us/msg")
        rows.append(Row(f"{label}, CPU us/msg", False, (), cpu))
        in_floors = {name: value / floor for name, value in cpu.items()}
        rows.append(Row(f"{label}, CPU floors", False, CPU_GOALS.get(workload, ()), in_floors))
    return [
        *rows,
        Row("end-to-end p50, ms", False, P50_GOALS, medians("latency", "p50 ms")),
        Row("end-to-end p99, ms", False, (), medians("latency", "p99 ms")),
        Row("server peak RSS (VmHWM), MB", False, (RSS_GOAL,), rss),
    ]


def _notes(args: argparse.Namespace, figures: Figures, rows: list[Row], began: float) -> list[str]:
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

    def backends(target: str) -> str:
        return ", ".join(
            f"{w} {_median(by[target], 'db us/msg'):.0f}"
            for w, by in figures.items()
            if by.get(target) and "db us/msg" in by[target][0].values
        )

    database = backends("hopper-postgres")
    # The JetStream targets' CPU counts their nats-servers: how much of it was theirs.
    nats = "; ".join(
        f"{target}: {backends(target) or '-'}"
        for target in ("hopper-jetstream", "hopper-jetstream-r3")
        if any(by.get(target) for by in figures.values())
    )
    load1, load5, _ = os.getloadavg()
    notes = [
        f"medians of {args.runs} runs x {args.seconds:g} s, {args.clients} clients, raw HTTP/1.1 "
        f"keep-alive, SQS JSON protocol; latency at {args.rate:g} msg/s with WaitTimeSeconds=20; "
        f"FIFO rows over {workloads.GROUPS} groups.",
        "CPU us/msg: the server's process tree (user + system, /proc) per message; for "
        "hopper-postgres with its own PostgreSQL backends, for the JetStream targets with "
        "their nats-servers. CPU floors: the same over the floor's CPU per request "
        "(uvicorn + Starlette answering a fixed body, this run).",
        f"of which hopper-postgres's database backends, us/msg: {database or '-'}",
        *([f"of which the nats-servers, us/msg: {nats}"] if nats else []),
        f"load generator CPU (max per workload, % of one core): {cpu}",
        f"whole benchmark took {time.monotonic() - began:.0f} s; load average at the end "
        f"{load1:.2f} (1 min), {load5:.2f} (5 min) on {os.cpu_count()} CPUs.",
        "goals: "
        + ", ".join(f"{label} {'met' if met else 'MISSED'}" for label, met in verdicts(rows)),
    ]
    achieved = ", ".join(
        f"{name} {_median(runs, 'sent/s'):,.0f}" for name, runs in figures["latency"].items()
    )
    notes.append(f"latency runs' achieved send rate, msg/s (median): {achieved}")
    if short:
        notes.append("latency runs that lost messages: " + "; ".join(short))
    return notes


def _failed(failures: list[str]) -> list[str]:
    if not failures:
        return []
    return ["runs a server failed (left out of the medians): " + "; ".join(failures)]


def _median(runs: list[Measure], key: str) -> float:
    found = [m.values[key] for m in runs if key in m.values]
    return statistics.median(found) if found else float("nan")


def _brief(measure: Measure) -> str:
    values = ", ".join(f"{k} {v:,.1f}" for k, v in measure.values.items())
    return f"{values} (client CPU {measure.client_cpu:.0f}%)"


if __name__ == "__main__":
    sys.exit(main())
