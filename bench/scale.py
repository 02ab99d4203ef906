"""`python -m bench scale`: how hopper's costs move as the work grows, one curve each,
drawn as SVG files into bench/curves/ (and the numbers printed, and kept beside them
in scale.json).

- depth: the backlog 1,000 -> 1,000,000 messages; the server's CPU per message (its
  process and its database backends) of a run of sends onto the backlog and of a
  drain of its head. The backlog is filled through the store's own batch path, in
  process: `PostgresQueueStore.send` of 5,000 messages a call, one statement each, on
  the benchmark's schema (a million in well under a minute), not through HTTP.
- queues: 1 -> 10,000 queues; sends spread round-robin over them, then receives (1 +
  DeleteMessage, round-robin in the same order), CPU per message; and ListQueues
  paging through all of them (1,000 a page), wall time and the server's CPU.
- polls: 16 -> 2,000 idle long polls (WaitTimeSeconds=20) on one queue of one
  process; the server's CPU while they wait (% of one core), and for single sends the
  time until one poll has the message (p50), with a check that each send answered
  exactly one poll.
- size: messages of 1 KiB -> 1 MiB; MB/s and CPU per MB of sends and of the drain.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import resource
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bench import svg, workloads
from bench.client import Connection
from bench.targets import DATABASE_URL, Target, running_targets
from bench.workloads import Load

# Idle long polls first, on a fresh server: after the others, work they left behind
# (the million-message backlog deleted, ten thousand queues) showed in its idle CPU.
CURVES = ("polls", "depth", "queues", "size")
OUT = Path(__file__).resolve().parent / "curves"
FILL_CHUNK = 5_000
MiB = 1024 * 1024
Results = dict[str, Any]


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    _more_files()  # 2,000 long polls are 2,000 sockets here and in the server
    with running_targets([args.target]) as (target,):
        results = asyncio.run(_curves(target, args))
    args.out.mkdir(parents=True, exist_ok=True)
    load1, load5, _ = os.getloadavg()
    results["machine"] = (
        f"load average {load1:.2f} (1 min), {load5:.2f} (5 min), "
        f"{os.cpu_count()} CPUs, target {args.target}"
    )
    (args.out / "scale.json").write_text(json.dumps(results, indent=1) + "\n")
    print(results["machine"])
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench scale",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--curves", nargs="+", choices=CURVES, default=list(CURVES))
    parser.add_argument(
        "--target",
        default="hopper-postgres",
        choices=["hopper-postgres", "hopper-memory", "hopper-jetstream"],
    )
    parser.add_argument("--seconds", type=float, default=3.0, help="length of one run")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument(
        "--depths", nargs="+", type=int, default=[1_000, 10_000, 100_000, 1_000_000]
    )
    parser.add_argument("--queues", nargs="+", type=int, default=[1, 10, 100, 1_000, 10_000])
    parser.add_argument("--polls", nargs="+", type=int, default=[16, 125, 500, 2_000])
    parser.add_argument(
        "--sizes",
        nargs="+",
        type=int,
        default=[1024, 4096, 16384, 65536, 262144, MiB],
        help="bytes",
    )
    parser.add_argument("--wakes", type=int, default=20, help="sends timed per poll count")
    parser.add_argument("--out", type=Path, default=OUT, help="where the SVGs go")
    return parser


async def _curves(target: Target, args: argparse.Namespace) -> Results:
    load = Load(target.port, args.clients, args.seconds, meter=target.meter)
    drawn: Results = {}
    try:
        for curve in args.curves:
            print(f"bench scale: {curve}", file=sys.stderr)
            drawn[curve] = await CURVE_FUNCTIONS[curve](target, load, args)
    finally:
        await target.meter.close()
    return drawn


# --- depth -----------------------------------------------------------------------------


async def _depth(target: Target, load: Load, args: argparse.Namespace) -> Results:
    send, drain, fill = [], [], []
    for depth in args.depths:
        url = await workloads.fresh_queue(load)
        began = time.perf_counter()
        await _fill(target, load, url, depth)
        fill.append(time.perf_counter() - began)
        send.append((await workloads.send_to(load, url)).values["us/msg"])
        # The head of the backlog: as much as a run drains, at most half the backlog.
        measure = await workloads.drain_from(load, url, max(depth // 2, 500))
        drain.append(measure.values["us/msg"])
        await _call(load, "DeleteQueue", {"QueueUrl": url})
        _say(
            f"depth {depth:,}: filled in {fill[-1]:.1f} s, send {send[-1]:.0f} us/msg, "
            f"drain {drain[-1]:.0f} us/msg ({measure.values['drained']:,.0f} drained)"
        )
    svg.line_chart(
        args.out / "depth.svg",
        "Backlog depth: CPU per message",
        "messages in the queue",
        "server + database CPU, us/msg",
        args.depths,
        {"SendMessage": send, "drain (receive 10 + delete)": drain},
    )
    return {"depths": args.depths, "send us/msg": send, "drain us/msg": drain, "fill seconds": fill}


async def _fill(target: Target, load: Load, url: str, count: int) -> None:
    """`count` messages of 100 bytes into the queue at `url`: on Postgres through the
    store's batch path in this process, elsewhere through SendMessageBatch."""
    if target.name != "hopper-postgres":
        await workloads.prefill_queue(load, url, count)
        return
    from hopper.core.ids import new_id
    from hopper.core.model import NewMessage, QueueKey
    from hopper.store.postgres import PostgresQueueStore

    account, name = url.rstrip("/").split("/")[-2:]
    key = QueueKey(account, name)
    assert target.schema is not None
    store = PostgresQueueStore(
        DATABASE_URL, schema=target.schema, listen=False, coalesce=False, max_size=2
    )
    await store.start(lambda key, count: None)
    try:
        for start in range(0, count, FILL_CHUNK):
            chunk = [
                NewMessage(id=new_id(), body=workloads.BODY)
                for _ in range(min(FILL_CHUNK, count - start))
            ]
            await store.send(key, chunk, now=None)
    finally:
        await store.close()


# --- queues ----------------------------------------------------------------------------


async def _queues(target: Target, load: Load, args: argparse.Namespace) -> Results:
    urls: list[str] = []
    send, receive, listing_ms, listing_cpu = [], [], [], []
    for count in args.queues:
        urls += await _create_queues(load, count - len(urls))
        send.append(await _spread_sends(load, urls))
        receive.append(await _spread_receives(load, urls))
        wall, cpu = await _list_all(load, count)
        listing_ms.append(wall * 1000)
        listing_cpu.append(cpu * 1000)
        _say(
            f"queues {count:,}: send {send[-1]:.0f} us/msg, receive {receive[-1]:.0f} us/msg, "
            f"ListQueues of all {listing_ms[-1]:.0f} ms ({listing_cpu[-1]:.0f} ms CPU)"
        )
    svg.line_chart(
        args.out / "queues.svg",
        "Queues: CPU per message",
        "queues",
        "server + database CPU, us/msg",
        args.queues,
        {"SendMessage": send, "receive 1 + delete": receive},
    )
    svg.line_chart(
        args.out / "queues-list.svg",
        "Queues: ListQueues through all pages",
        "queues",
        "ms",
        args.queues,
        {"wall time": listing_ms, "server CPU": listing_cpu},
    )
    return {
        "queues": args.queues,
        "send us/msg": send,
        "receive us/msg": receive,
        "ListQueues ms": listing_ms,
        "ListQueues CPU ms": listing_cpu,
    }


async def _create_queues(load: Load, count: int) -> list[str]:
    names = iter(range(count))
    made: list[str] = []
    prefix = f"spread-{time.time_ns()}"

    async def client(index: int, connection: Connection) -> None:
        for number in names:
            answer = await connection.call("CreateQueue", {"QueueName": f"{prefix}-{number}"})
            made.append(answer["QueueUrl"])

    await workloads.timed(load, client)
    return sorted(made)


async def _spread_sends(load: Load, urls: list[str]) -> float:
    """SendMessage round-robin over `urls` for a run, at least once to each queue:
    the server's CPU per message."""
    turns = itertools.count()
    deadline = time.monotonic() + load.seconds
    sent = [0] * load.clients

    async def client(index: int, connection: Connection) -> None:
        while time.monotonic() < deadline or sum(sent) < len(urls):
            url = urls[next(turns) % len(urls)]
            await connection.call("SendMessage", {"QueueUrl": url, "MessageBody": workloads.BODY})
            sent[index] += 1

    _, _, used = await workloads.timed(load, client)
    return _said("send", workloads.per_message(used, sum(sent)))


async def _spread_receives(load: Load, urls: list[str]) -> float:
    """ReceiveMessage (1) + DeleteMessage round-robin over `urls` for a run, each
    queue once before any twice: the server's CPU per message received. (One message
    a receive, so that the CPU per message does not fall with more queues only because
    each receive finds fewer.)"""
    turns = itertools.count()
    deadline = time.monotonic() + load.seconds
    got = [0] * load.clients

    async def client(index: int, connection: Connection) -> None:
        while time.monotonic() < deadline:
            url = urls[next(turns) % len(urls)]
            answer = await connection.call("ReceiveMessage", {"QueueUrl": url})
            for message in answer.get("Messages", []):
                await connection.call(
                    "DeleteMessage", {"QueueUrl": url, "ReceiptHandle": message["ReceiptHandle"]}
                )
                got[index] += 1

    _, _, used = await workloads.timed(load, client)
    return _said("receive", workloads.per_message(used, sum(got)))


def _said(what: str, cpu: dict[str, float]) -> float:
    """The CPU per message, after saying its database part (stderr)."""
    _say(f"  {what}: {cpu['us/msg']:.0f} us/msg, of which database {cpu['db us/msg']:.0f}")
    return cpu["us/msg"]


async def _list_all(load: Load, expected: int) -> tuple[float, float]:
    """ListQueues through every page: wall seconds and the server's CPU seconds."""
    assert load.meter is not None
    before = await load.meter()
    began = time.perf_counter()
    listed, token = 0, None
    connection = load.connect()
    try:
        while True:
            payload: dict[str, Any] = {"MaxResults": 1000}
            if token:
                payload["NextToken"] = token
            page = await connection.call("ListQueues", payload)
            listed += len(page.get("QueueUrls", []))
            token = page.get("NextToken")
            if not token:
                break
    finally:
        await connection.close()
    wall = time.perf_counter() - began
    after = await load.meter()
    if listed < expected:
        raise RuntimeError(f"ListQueues listed {listed} queues of {expected}")
    return wall, sum(after) - sum(before)


# --- idle long polls -------------------------------------------------------------------


async def _polls(target: Target, load: Load, args: argparse.Namespace) -> Results:
    idle, wake_p50, answered = [], [], []
    for count in args.polls:
        cpu, wakes, extra = await _idle_polls(load, count, args.wakes)
        idle.append(cpu)
        wake_p50.append(statistics.median(wakes) * 1000)
        answered.append(extra)
        _say(
            f"polls {count:,}: idle server CPU {cpu:.2f}% of a core, send -> poll p50 "
            f"{wake_p50[-1]:.2f} ms, polls answered per send {extra:.2f}"
        )
    svg.line_chart(
        args.out / "polls.svg",
        "Idle long polls: server CPU while they wait",
        "long polls waiting",
        "% of one core",
        args.polls,
        {"server + database": idle},
    )
    svg.line_chart(
        args.out / "polls-wake.svg",
        "Idle long polls: a send wakes one (p50)",
        "long polls waiting",
        "ms from send to receive",
        args.polls,
        {"p50": wake_p50},
    )
    return {
        "polls": args.polls,
        "idle CPU %": idle,
        "wake p50 ms": wake_p50,
        "polls answered per send": answered,
    }


async def _idle_polls(load: Load, count: int, wakes: int) -> tuple[float, list[float], float]:
    """`count` long polls on one queue: the server's CPU % while they wait, then for
    `wakes` single sends the seconds until a poll has the message, and how many polls
    answered per send (1.0: each send woke exactly one)."""
    assert load.meter is not None
    url = await workloads.fresh_queue(load)
    arrived: asyncio.Queue[float] = asyncio.Queue()
    answers = [0]
    connections = [load.connect() for _ in range(count)]

    async def poll(connection: Connection) -> None:
        while True:  # ended by the cancellation below
            answer = await connection.call(
                "ReceiveMessage", {"QueueUrl": url, "WaitTimeSeconds": 20}
            )
            answers[0] += 1
            for message in answer.get("Messages", []):
                arrived.put_nowait(time.perf_counter())
                await workloads.delete(connection, url, [message])

    tasks = [asyncio.create_task(poll(c)) for c in connections]
    try:
        # Nothing tells from outside when the server holds every poll: give them a moment.
        await asyncio.sleep(1.0 + count / 1000)
        before, began = await load.meter(), time.perf_counter()
        await asyncio.sleep(load.seconds)
        after, wall = await load.meter(), time.perf_counter() - began
        cpu = 100 * (sum(after) - sum(before)) / wall
        answers[0], times = 0, []
        sender = load.connect()
        for _ in range(wakes):
            sent = time.perf_counter()
            await sender.call("SendMessage", {"QueueUrl": url, "MessageBody": workloads.BODY})
            times.append(await asyncio.wait_for(arrived.get(), 5.0) - sent)
        await asyncio.sleep(0.05)  # a second poll woken by the last send would answer now
        await sender.close()
        return cpu, times, answers[0] / wakes
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for connection in connections:
            await connection.close()
        await _call(load, "DeleteQueue", {"QueueUrl": url})


# --- message size ----------------------------------------------------------------------


async def _size(target: Target, load: Load, args: argparse.Namespace) -> Results:
    send_mb, drain_mb, send_cpu, drain_cpu = [], [], [], []
    for size in args.sizes:
        url = await workloads.fresh_queue(load, MaximumMessageSize=str(MiB))
        # A run, or 256 MiB, whichever comes first: big messages fill the database fast.
        sent, measure = await _send_sized(load, url, size, max(1, 256 * MiB // size))
        send_mb.append(measure["msg/s"] * size / MiB)
        send_cpu.append(measure["us/msg"] / 1000 * MiB / size)
        drained = await workloads.drain_from(load, url, sent)
        drain_mb.append(drained.values["msg/s"] * size / MiB)
        drain_cpu.append(drained.values["us/msg"] / 1000 * MiB / size)
        await _call(load, "DeleteQueue", {"QueueUrl": url})
        _say(
            f"size {size:,} B: send {send_mb[-1]:.1f} MiB/s ({send_cpu[-1]:.1f} ms CPU/MiB), "
            f"drain {drain_mb[-1]:.1f} MiB/s ({drain_cpu[-1]:.1f} ms CPU/MiB)"
        )
    kib = [size / 1024 for size in args.sizes]
    svg.line_chart(
        args.out / "size.svg",
        "Message size: throughput",
        "message size, KiB",
        "MiB/s",
        kib,
        {"SendMessage": send_mb, "drain (receive 10 + delete)": drain_mb},
    )
    svg.line_chart(
        args.out / "size-cpu.svg",
        "Message size: CPU per MiB",
        "message size, KiB",
        "server + database CPU, ms per MiB",
        kib,
        {"SendMessage": send_cpu, "drain (receive 10 + delete)": drain_cpu},
    )
    return {
        "sizes": args.sizes,
        "send MiB/s": send_mb,
        "drain MiB/s": drain_mb,
        "send CPU ms/MiB": send_cpu,
        "drain CPU ms/MiB": drain_cpu,
    }


async def _send_sized(load: Load, url: str, size: int, budget: int) -> tuple[int, dict[str, float]]:
    """SendMessage of `size` bytes from every client for a run or `budget` messages,
    whichever ends first: how many were sent, msg/s and the server's CPU per message."""
    body = "x" * size
    done = [0] * load.clients
    deadline = time.monotonic() + load.seconds

    async def client(index: int, connection: Connection) -> None:
        while time.monotonic() < deadline and sum(done) < budget:
            await connection.call("SendMessage", {"QueueUrl": url, "MessageBody": body})
            done[index] += 1

    elapsed, _, used = await workloads.timed(load, client)
    return sum(done), {"msg/s": sum(done) / elapsed, **workloads.per_message(used, sum(done))}


# --- helpers ---------------------------------------------------------------------------


async def _call(load: Load, action: str, payload: dict[str, Any]) -> dict[str, Any]:
    connection = load.connect()
    try:
        return await connection.call(action, payload)
    finally:
        await connection.close()


def _more_files() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = hard if hard != resource.RLIM_INFINITY else 65536
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


def _say(line: str) -> None:
    print(line, flush=True)


CURVE_FUNCTIONS: dict[str, Callable[[Target, Load, argparse.Namespace], Awaitable[Results]]] = {
    "depth": _depth,
    "queues": _queues,
    "polls": _polls,
    "size": _size,
}
