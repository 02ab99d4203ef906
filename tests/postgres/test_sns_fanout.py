"""A publish on PostgreSQL is one transaction with its fan-out: a server killed under
a publish load leaves every acknowledged publish in every subscribed queue, and no
publish in only some of them.

Postgres-only because the property is the database's: the in-memory store dies with
its process, and JetStream has no transaction over several queues (README, "SNS").
"""

from __future__ import annotations

import asyncio
import itertools
import signal
import threading
import time
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from tests.server.processes import HopperProcess, start_hopper

from .databases import SCHEMA
from .test_processes import WAIT_SECONDS, in_thread, serving

pytestmark = pytest.mark.slow

QUEUES = 5
PUBLISHERS = 6
KILL_AFTER = 600  # acknowledged publishes before the SIGKILL
LOAD_SECONDS = 20.0


def clients(server: HopperProcess) -> tuple[Any, Any]:
    options = dict(endpoint_url=server.url, region_name="us-east-1",
                   aws_access_key_id="test", aws_secret_access_key="test",
                   config=Config(retries={"total_max_attempts": 1}, connect_timeout=2,
                                 read_timeout=5))
    return boto3.client("sns", **options), boto3.client("sqs", **options)


def fan_out_to_queues(server: HopperProcess) -> tuple[str, list[str]]:
    sns, sqs = clients(server)
    topic = sns.create_topic(Name="kill")["TopicArn"]
    urls = []
    for n in range(QUEUES):
        url = sqs.create_queue(QueueName=f"kill-{n}")["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])
        sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=arn["Attributes"]["QueueArn"],
                      Attributes={"RawMessageDelivery": "true"})
        urls.append(url)
    return topic, urls


class PublishLoad:
    """PUBLISHERS threads publishing (single and batches of 10) until stopped or the
    server stops answering; `acknowledged` holds the text of every publish answered."""

    def __init__(self, server: HopperProcess, topic: str) -> None:
        self.topic = topic
        self.acknowledged: list[str] = []
        self.stop = threading.Event()
        self._lock = threading.Lock()
        self._clients = [clients(server)[0] for _ in range(PUBLISHERS)]
        self._threads = [threading.Thread(target=self._publish, args=(n,))
                         for n in range(PUBLISHERS)]

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def join(self) -> None:
        for thread in self._threads:
            thread.join(WAIT_SECONDS)
            assert not thread.is_alive(), "a publisher is stuck"

    def count(self) -> int:
        with self._lock:
            return len(self.acknowledged)

    def _publish(self, publisher: int) -> None:
        sns = self._clients[publisher]
        deadline = time.monotonic() + LOAD_SECONDS
        for n in itertools.count():
            if self.stop.is_set() or time.monotonic() > deadline:
                return
            try:
                texts = self._publish_once(sns, f"{publisher}-{n}", n % 2 == 0)
            except (BotoCoreError, ClientError):
                return
            with self._lock:
                self.acknowledged.extend(texts)

    def _publish_once(self, sns: Any, stem: str, batch: bool) -> list[str]:
        # An answer without a message id is no acknowledgement (a response cut by the
        # kill can reach botocore as an empty 200).
        if not batch:
            answer = sns.publish(TopicArn=self.topic, Message=stem)
            return [stem] if "MessageId" in answer else []
        entries = [{"Id": str(i), "Message": f"{stem}-{i}"} for i in range(10)]
        answer = sns.publish_batch(TopicArn=self.topic, PublishBatchRequestEntries=entries)
        done = {entry["Id"] for entry in answer.get("Successful", [])}
        return [e["Message"] for e in entries if e["Id"] in done]


async def test_a_server_killed_under_publishes_leaves_each_in_all_queues_or_none(
    database: str, tmp_path: Path
) -> None:
    first = await in_thread(lambda: start_hopper(
        "--database-url", database, "--database-schema", SCHEMA, log=tmp_path / "first.log"))
    try:
        topic, urls = await in_thread(fan_out_to_queues, first)
        load = PublishLoad(first, topic)
        load.start()
        deadline = time.monotonic() + LOAD_SECONDS / 2
        while load.count() < KILL_AFTER and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        first.process.kill()  # SIGKILL: publishes cut mid-transaction
        await in_thread(first.process.wait, WAIT_SECONDS)
    finally:
        if first.process.poll() is None:
            first.process.kill()
            first.process.wait(WAIT_SECONDS)
    load.stop.set()
    await in_thread(load.join)
    assert load.count() > 0, first.output()
    assert first.process.returncode == -signal.SIGKILL

    most = len(load.acknowledged) + PUBLISHERS * 10
    with serving(database, tmp_path / "second.log") as second:
        sqs = clients(second)[1]
        bodies = [await in_thread(_bodies, sqs, url, most) for url in urls]
    print(f"\n{len(load.acknowledged)} publishes acknowledged; queues hold "
          f"{[len(b) for b in bodies]}")
    for held in bodies:
        assert len(held) == len(set(held)), "a publish was delivered twice to one queue"
        assert not set(load.acknowledged) - set(held), "an acknowledged publish is missing"
    assert all(set(held) == set(bodies[0]) for held in bodies), "a publish reached only some"


def _bodies(sqs: Any, url: str, most: int) -> list[str]:
    """Every body of the queue, received and deleted."""
    got: list[str] = []
    for _ in range(most // 10 + 2):
        batch = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10,
                                    VisibilityTimeout=300).get("Messages", [])
        if not batch:
            return got
        got.extend(m["Body"] for m in batch)
        sqs.delete_message_batch(QueueUrl=url, Entries=[
            {"Id": str(n), "ReceiptHandle": m["ReceiptHandle"]} for n, m in enumerate(batch)])
    raise AssertionError(f"the queue still had messages after {len(got)}")

