"""Hopper.Dispatch against the same trivial function fed by a boto3 receive loop.

    PYTHONPATH=server .venv/bin/python -m bench.dispatch [messages] [concurrency]

With HOPPER_BENCH_DATABASE_URL set, hopper runs on that PostgreSQL (a schema of its own,
dropped afterwards); the CPU then counts the hopper process alone, not its backends.

One hopper (in memory) and one trivial function (bench/trivial_function.py), each a
process of its own on 127.0.0.1. The queue is filled with `messages` messages, then
drained twice: once by hopper's own dispatch (batchSize 10, maxConcurrency
`concurrency`), once by `concurrency` threads of the loop a user writes by hand
(ReceiveMessage 10 with a long poll, POST the SQS event, DeleteMessageBatch). Printed:
msg/s and CPU microseconds per message of hopper, of the function, and of the client
loop (the loop's threads, in this process; nothing for dispatch).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import boto3
import httpx
from tests.server.processes import free_port, start_hopper  # noqa: E402

from bench.meter import process_seconds


def client(url: str):
    return boto3.client(
        "sqs", endpoint_url=url, region_name="us-east-1",
        aws_access_key_id="x", aws_secret_access_key="x",
    )


def fill(url: str, queue: str, messages: int) -> None:
    def batch(start: int) -> None:
        sqs = clients.setdefault(threading.get_ident(), client(url))
        entries = [{"Id": str(i), "MessageBody": f"job {start + i}"} for i in range(10)]
        sqs.send_message_batch(QueueUrl=queue, Entries=entries)

    clients: dict[int, object] = {}
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(batch, range(0, messages, 10)))


def depth(sqs, queue: str) -> int:
    names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    found = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=names)["Attributes"]
    return sum(int(found[name]) for name in names)


def loop(url: str, queue: str, function: str) -> None:
    """The hand-written consumer: receive, POST the event, delete what succeeded."""
    sqs = client(url)
    http = httpx.Client()
    empty = 0
    while empty < 2:
        messages = sqs.receive_message(
            QueueUrl=queue, MaxNumberOfMessages=10, WaitTimeSeconds=1
        ).get("Messages", [])
        if not messages:
            empty += 1
            continue
        records = [
            {"messageId": m["MessageId"], "receiptHandle": m["ReceiptHandle"],
             "body": m["Body"], "eventSource": "aws:sqs"}
            for m in messages
        ]
        failed = http.post(function, json={"Records": records}).json()["batchItemFailures"]
        failed_ids = {item["itemIdentifier"] for item in failed}
        entries = [
            {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]}
            for i, m in enumerate(messages) if m["MessageId"] not in failed_ids
        ]
        sqs.delete_message_batch(QueueUrl=queue, Entries=entries)


def _drop(database: str, schema: str) -> None:
    import asyncio

    import asyncpg

    async def drop() -> None:
        connection = await asyncpg.connect(database)
        await connection.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        await connection.close()

    asyncio.run(drop())


def own_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(run, hopper_pid: int, function_pid: int, messages: int) -> dict[str, float]:
    before = (process_seconds(hopper_pid), process_seconds(function_pid), own_seconds())
    started = time.monotonic()
    run()
    elapsed = time.monotonic() - started
    after = (process_seconds(hopper_pid), process_seconds(function_pid), own_seconds())
    cpu = [(b - a) / messages * 1e6 for a, b in zip(before, after, strict=True)]
    return {"msg/s": messages / elapsed, "hopper": cpu[0], "function": cpu[1], "client": cpu[2]}


def main(messages: int = 20_000, concurrency: int = 4) -> None:
    import tempfile
    from pathlib import Path

    port = free_port()
    function = subprocess.Popen([sys.executable, "-m", "bench.trivial_function", str(port)])
    target = f"http://127.0.0.1:{port}/2015-03-31/functions/function/invocations"
    with tempfile.TemporaryDirectory() as scratch:
        database = os.environ.get("HOPPER_BENCH_DATABASE_URL")
        schema = f"bench_dispatch_{os.getpid()}"
        store = [] if database is None else [
            "--database-url", database, "--database-schema", schema
        ]
        hopper = start_hopper(
            *store, "--log-level", "warning", "--relaxed-timing", log=Path(scratch) / "hopper.log"
        )
        try:
            sqs = client(hopper.url)
            while True:
                try:
                    httpx.post(target, content=b'{"Records":[]}')
                    break
                except httpx.HTTPError:
                    time.sleep(0.1)
            results = {}
            queue = sqs.create_queue(QueueName="dispatched")["QueueUrl"]
            fill(hopper.url, queue, messages)
            dispatch = json.dumps(
                {"url": target, "batchSize": 10, "maxConcurrency": concurrency}
            )

            def dispatched() -> None:
                sqs.set_queue_attributes(QueueUrl=queue, Attributes={"Hopper.Dispatch": dispatch})
                while depth(sqs, queue):
                    time.sleep(0.05)

            results["hopper dispatch"] = measure(
                dispatched, hopper.process.pid, function.pid, messages
            )
            queue = sqs.create_queue(QueueName="looped")["QueueUrl"]
            fill(hopper.url, queue, messages)

            def looped() -> None:
                threads = [
                    threading.Thread(target=loop, args=(hopper.url, queue, target))
                    for _ in range(concurrency)
                ]
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join()

            results["boto3 receive loop"] = measure(
                looped, hopper.process.pid, function.pid, messages
            )
        finally:
            hopper.stop()
            function.terminate()
            function.wait()
            if database is not None:
                _drop(database, schema)
    print(f"{messages} messages, concurrency {concurrency}; CPU in microseconds per message")
    print(f"{'consumer':<20} {'msg/s':>8} {'hopper':>8} {'function':>9} {'client':>8}")
    for name, r in results.items():
        print(
            f"{name:<20} {r['msg/s']:>8.0f} {r['hopper']:>8.0f} {r['function']:>9.0f} "
            f"{r['client']:>8.0f}"
        )


if __name__ == "__main__":
    main(*(int(arg) for arg in sys.argv[1:]))
