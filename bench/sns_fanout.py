"""What one SNS publish fanned out to N queues costs (PostgreSQL, or --store memory):
publishes per second, and the CPU per publish of the hopper process and of its database backends
(bench/meter.py), against N single SendMessage calls of the same message for scale.

    PYTHONPATH=server:. .venv/bin/python bench/sns_fanout.py [--queues 10] [--seconds 10]

A fresh database per run; boto3 clients in threads on the same machine (their CPU is
not counted). Each publish is one transaction enqueueing N copies (store/postgres/topics.py).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import boto3
from botocore.config import Config

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from bench.meter import Meter  # noqa: E402
from postgres.databases import drop, dsn_for, empty_database  # noqa: E402
from server.processes import start_hopper  # noqa: E402


def client(service: str, url: str):
    return boto3.client(service, endpoint_url=url, region_name="us-east-1",
                        aws_access_key_id="x", aws_secret_access_key="x",
                        config=Config(retries={"total_max_attempts": 1},
                                      max_pool_connections=64))


def set_up(url: str, queues: int) -> tuple[str, list[str]]:
    sns, sqs = client("sns", url), client("sqs", url)
    topic = sns.create_topic(Name="bench")["TopicArn"]
    urls = []
    for n in range(queues):
        queue = sqs.create_queue(QueueName=f"bench-{n}")["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])
        sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=arn["Attributes"]["QueueArn"],
                      Attributes={"RawMessageDelivery": "true"})
        urls.append(queue)
    return topic, urls


def load(url: str, seconds: float, threads: int, work) -> int:
    counts = [0] * threads

    def run(n: int) -> None:
        sns, sqs = client("sns", url), client("sqs", url)
        stop = time.monotonic() + seconds
        while time.monotonic() < stop:
            work(sns, sqs)
            counts[n] += 1

    workers = [threading.Thread(target=run, args=(n,)) for n in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return sum(counts)


async def measure(args: argparse.Namespace) -> None:
    memory = args.store == "memory"
    database = None if memory else await empty_database()
    name = f"hopper-bench-{uuid.uuid4().hex[:8]}"
    options = [] if database is None else [
        "--database-url", dsn_for(database) + f"?application_name={name}"]
    with tempfile.TemporaryDirectory() as scratch:
        server = start_hopper(*options, "--log-level", "warning",
                              log=Path(scratch) / "hopper.log")
        meter = Meter(server.process.pid, None if database is None else dsn_for(database), name)
        try:
            topic, urls = set_up(server.url, args.queues)

            def publish(sns, sqs) -> None:
                sns.publish(TopicArn=topic, Message="x" * 200)

            def sends(sns, sqs) -> None:
                for queue in urls:
                    sqs.send_message(QueueUrl=queue, MessageBody="x" * 200)

            for label, work in ((f"publish to {args.queues} queues", publish),
                                (f"{args.queues} SendMessage calls", sends)):
                before = await meter()
                count = await asyncio.to_thread(load, server.url, args.seconds, args.threads,
                                                work)
                after = await meter()
                print(f"{label:>24}: {count / args.seconds:7.1f}/s, hopper "
                      f"{(after[0] - before[0]) / count * 1e3:.2f} ms CPU, database "
                      f"{(after[1] - before[1]) / count * 1e3:.2f} ms CPU per call")
        finally:
            await meter.close()
            server.stop()
            if database is not None:
                await drop(database)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--queues", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--store", choices=["postgres", "memory"], default="postgres")
    asyncio.run(measure(parser.parse_args()))


if __name__ == "__main__":
    main()
