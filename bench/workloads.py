"""The workloads, each one bounded run against one server on a fresh queue: send,
batch and drain on a standard queue and on a FIFO queue of 100 groups, and the
end-to-end latency.

Every run returns a `Measure`: the figures for the table (msg/s, and the server's CPU
per message when the load has a meter: its process tree as "us/msg", its database
backends as "db us/msg") and the load generator's own CPU use over the run (as % of
one core; near 100 means the client, not the server, was the limit). Loops are bounded
by a deadline and, where they count, by a count.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bench.client import Connection, RequestFailed
from bench.meter import CpuReading

BODY = "x" * 100
BATCH = 10
GROUPS = 100  # FIFO workloads spread their messages over this many groups
_queue_numbers = itertools.count()
# FIFO messages need a deduplication id each: the bodies are all alike.
_message_numbers = itertools.count()


class WrongAnswer(Exception):
    """The server answered 200 but refused part of a batch it should have taken (a
    failed entry of a send or delete batch)."""


@dataclass(frozen=True)
class Measure:
    """One run's figures: `values` by name (msg/s or ms) and the client's CPU %."""

    values: dict[str, float]
    client_cpu: float


@dataclass(frozen=True)
class Load:
    """Where and how hard to push: server port, clients, and seconds per run."""

    port: int
    clients: int
    seconds: float
    host: str = "127.0.0.1"
    # Reads the server's CPU seconds; None: CPU per message is not measured.
    meter: CpuReading | None = None

    def connect(self) -> Connection:
        return Connection(self.host, self.port)


async def send(load: Load, fifo: bool = False) -> Measure:
    """SendMessage of 100 bytes from every client, as fast as the server answers (on a
    FIFO queue, round the groups)."""
    return await send_to(load, await fresh_queue(load, fifo), fifo)


async def send_to(load: Load, url: str, fifo: bool = False) -> Measure:
    """SendMessage of 100 bytes from every client to the queue at `url`."""

    async def one(connection: Connection) -> int:
        await connection.call("SendMessage", {"QueueUrl": url, **_entry(fifo)})
        return 1

    return await closed_loop(load, one)


async def send_batch(load: Load, fifo: bool = False) -> Measure:
    """SendMessageBatch of 10 × 100 bytes from every client, as fast as answered."""
    url = await fresh_queue(load, fifo)
    return await closed_loop(load, _batch_sender(url, fifo))


async def drain(load: Load, prefill: int, fifo: bool = False) -> Measure:
    """Receive 10 + DeleteMessageBatch from every client over a queue pre-filled with
    `prefill` messages, until all are deleted (or three run lengths have passed). An
    empty answer is asked again: a server may answer empty while others hold the rest
    (on a FIFO queue, a group whose messages are in flight)."""
    url = await fresh_queue(load, fifo)
    return await drain_from(load, url, await prefill_queue(load, url, prefill, fifo))


async def drain_from(load: Load, url: str, count: int) -> Measure:
    """Receive 10 + DeleteMessageBatch from every client until `count` messages of the
    queue at `url` are deleted (or three run lengths have passed)."""
    deleted = [0] * load.clients
    deadline = time.monotonic() + 3 * load.seconds

    async def consume(index: int, connection: Connection) -> None:
        while sum(deleted) < count and time.monotonic() < deadline:
            got = await connection.call(
                "ReceiveMessage", {"QueueUrl": url, "MaxNumberOfMessages": BATCH}
            )
            messages = got.get("Messages", [])
            if messages:
                await delete(connection, url, messages)
                deleted[index] += len(messages)

    elapsed, cpu, used = await timed(load, consume)
    done = sum(deleted)
    return Measure({"msg/s": done / elapsed, "drained": done, **per_message(used, done)}, cpu)


async def latency(load: Load, rate: float) -> Measure:
    """End-to-end latency at `rate` sends per second: long-polling consumers
    (WaitTimeSeconds=20) record receive time − send time, both read in this process."""
    url = await fresh_queue(load)
    total = int(rate * load.seconds)
    senders = max(1, load.clients // 4)  # a few connections carry 500 msg/s easily
    seen: dict[int, float] = {}
    everything = asyncio.Event()
    start = time.perf_counter() + 0.2  # consumers are polling before the first send

    async def produce(index: int, connection: Connection) -> None:
        for number in range(index, total, senders):
            await asyncio.sleep(max(0.0, start + number / rate - time.perf_counter()))
            body = f"{number} {time.perf_counter():.9f} {BODY}"
            await connection.call("SendMessage", {"QueueUrl": url, "MessageBody": body})

    async def consume(connection: Connection) -> None:
        while True:  # bounded by the cancellation below
            got = await connection.call(
                "ReceiveMessage",
                {
                    "QueueUrl": url,
                    "MaxNumberOfMessages": BATCH,
                    "WaitTimeSeconds": 20,
                },
            )
            arrived = time.perf_counter()
            messages = got.get("Messages", [])
            for message in messages:
                number, sent, _ = message["Body"].split(" ", 2)
                seen.setdefault(int(number), (arrived - float(sent)) * 1000)
            if len(seen) >= total:
                everything.set()
            if messages:
                await delete(connection, url, messages)

    producers = [load.connect() for _ in range(senders)]
    consumers = [load.connect() for _ in range(load.clients)]
    cpu_before, wall_before = time.process_time(), time.perf_counter()
    polls = [asyncio.create_task(consume(connection)) for connection in consumers]
    try:
        await asyncio.gather(*(produce(i, c) for i, c in enumerate(producers)))
        sending = time.perf_counter() - start
        # A short wait for stragglers; what never came shows as received < sent.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(everything.wait(), timeout=5.0)
    finally:
        for poll in polls:
            poll.cancel()
        await asyncio.gather(*polls, return_exceptions=True)
        for connection in producers + consumers:
            await connection.close()
    cpu = _cpu_percent(cpu_before, wall_before)
    for poll in polls:
        if not poll.cancelled() and poll.exception() is not None:
            raise poll.exception()  # type: ignore[misc]
    samples = sorted(seen.values())
    return Measure(
        {
            "p50 ms": _percentile(samples, 0.50),
            "p99 ms": _percentile(samples, 0.99),
            "received": len(samples),
            "sent": total,
            "sent/s": total / sending,  # below `rate` when the server cannot keep up
        },
        cpu,
    )


def _entry(fifo: bool) -> dict[str, str]:
    """A message's fields: its body, and on a FIFO queue its group and deduplication id."""
    if not fifo:
        return {"MessageBody": BODY}
    number = next(_message_numbers)
    return {
        "MessageBody": BODY,
        "MessageGroupId": f"g{number % GROUPS}",
        "MessageDeduplicationId": str(number),
    }


def _batch_sender(url: str, fifo: bool = False) -> Callable[[Connection], Awaitable[int]]:
    fixed = [{"Id": str(i), "MessageBody": BODY} for i in range(BATCH)]

    async def one(connection: Connection) -> int:
        entries = [{"Id": str(i), **_entry(True)} for i in range(BATCH)] if fifo else fixed
        answer = await connection.call("SendMessageBatch", {"QueueUrl": url, "Entries": entries})
        if answer.get("Failed"):
            raise WrongAnswer(f"SendMessageBatch failed entries: {answer['Failed'][:2]}")
        return BATCH

    return one


async def closed_loop(load: Load, one: Callable[[Connection], Awaitable[int]]) -> Measure:
    """Every client repeats `one` (which returns messages done) until the deadline."""
    done = [0] * load.clients
    deadline = time.monotonic() + load.seconds

    async def client(index: int, connection: Connection) -> None:
        while time.monotonic() < deadline:
            try:
                done[index] += await one(connection)
            except RequestFailed as failure:
                if not full(failure):
                    raise
                return  # the queue is full (a store's depth limit): the run ends here

    elapsed, cpu, used = await timed(load, client)
    return Measure({"msg/s": sum(done) / elapsed, **per_message(used, sum(done))}, cpu)


def full(failure: RequestFailed) -> bool:
    """Whether a failed call was refused because the queue holds all it may (hopper's
    JetStream store keeps at most 10,000 messages a queue)."""
    return "OverLimit" in str(failure)


async def timed(
    load: Load, client: Callable[[int, Connection], Awaitable[None]]
) -> tuple[float, float, tuple[float, float] | None]:
    """Run `client` on `load.clients` fresh connections: wall seconds, client CPU % and
    the server's CPU seconds meanwhile (process tree, database backends; None without
    a meter)."""
    connections = [load.connect() for _ in range(load.clients)]
    before = await load.meter() if load.meter else None
    cpu_before, wall_before = time.process_time(), time.perf_counter()
    try:
        await asyncio.gather(*(client(i, c) for i, c in enumerate(connections)))
    finally:
        for connection in connections:
            await connection.close()
    elapsed, cpu = time.perf_counter() - wall_before, _cpu_percent(cpu_before, wall_before)
    used = None
    if load.meter and before:
        after = await load.meter()
        used = (after[0] - before[0], after[1] - before[1])
    return elapsed, cpu, used


def per_message(used: tuple[float, float] | None, messages: int) -> dict[str, float]:
    """The server's CPU microseconds per message: all of it, and its database's part."""
    if used is None or messages == 0:
        return {}
    server, database = used
    return {"us/msg": 1e6 * (server + database) / messages, "db us/msg": 1e6 * database / messages}


async def prefill_queue(load: Load, url: str, count: int, fifo: bool = False) -> int:
    """Send `count` messages in batches (fewer if the queue fills up): how many."""
    batches = iter(range(0, count, BATCH))
    sender = _batch_sender(url, fifo)
    sent = [0]

    async def client(index: int, connection: Connection) -> None:
        for _ in batches:  # the clients share one iterator: `count` messages in all
            try:
                moved = await sender(connection)  # (not `+= await`: that reads first)
            except RequestFailed as failure:
                if not full(failure):
                    raise
                return
            sent[0] += moved

    await timed(load, client)
    return sent[0]


async def delete(connection: Connection, url: str, messages: list[dict[str, str]]) -> None:
    entries = [{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(messages)]
    answer = await connection.call("DeleteMessageBatch", {"QueueUrl": url, "Entries": entries})
    if answer.get("Failed"):
        raise WrongAnswer(f"DeleteMessageBatch failed entries: {answer['Failed'][:2]}")


async def fresh_queue(load: Load, fifo: bool = False, **attributes: str) -> str:
    connection = load.connect()
    try:
        name = f"bench-{time.time_ns()}-{next(_queue_numbers)}"
        if fifo:
            name, attributes = f"{name}.fifo", {**attributes, "FifoQueue": "true"}
        payload: dict[str, object] = {"QueueName": name}
        if attributes:
            payload["Attributes"] = attributes
        answer = await connection.call("CreateQueue", payload)
        return str(answer["QueueUrl"])
    finally:
        await connection.close()


def _cpu_percent(cpu_before: float, wall_before: float) -> float:
    wall = time.perf_counter() - wall_before
    return 100 * (time.process_time() - cpu_before) / wall if wall > 0 else 0.0


def _percentile(samples: list[float], fraction: float) -> float:
    if not samples:
        return float("nan")
    return samples[min(len(samples) - 1, int(fraction * len(samples)))]
