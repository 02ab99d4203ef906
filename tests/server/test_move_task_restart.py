"""A message move task survives a server restart on Postgres: the stopping server hands
the task back, the next one resumes it in its first housekeeping round and finishes it.

Postgres only by nature: the memory store forgets everything with its process."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from botocore.config import Config

from tests.postgres.databases import drop, dsn_for, empty_database

from .processes import start_hopper

TASK_DEADLINE = 30.0
POLL_PAUSE = 0.05


@pytest.fixture
def database() -> Iterator[str]:
    name = asyncio.run(empty_database())
    try:
        yield dsn_for(name)
    finally:
        asyncio.run(drop(name))


def client(url: str):
    return boto3.client(
        "sqs",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
        config=Config(retries={"total_max_attempts": 1}),
    )


def arn_of(sqs, url: str) -> str:
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])
    return str(attributes["Attributes"]["QueueArn"])


def test_a_move_task_interrupted_by_a_restart_is_resumed_and_completed(database, tmp_path: Path):
    log = tmp_path / "hopper.log"
    first = start_hopper("--database-url", database, "--relaxed-timing", log=log)
    try:
        sqs = client(first.url)
        dlq = sqs.create_queue(QueueName="dlq")["QueueUrl"]
        policy = json.dumps({"deadLetterTargetArn": arn_of(sqs, dlq), "maxReceiveCount": 1})
        sqs.create_queue(QueueName="source", Attributes={"RedrivePolicy": policy})
        elsewhere = sqs.create_queue(QueueName="elsewhere")["QueueUrl"]
        for n in range(4):
            sqs.send_message(QueueUrl=dlq, MessageBody=f"m{n}")
        # One message a second: the task is still running when the server stops.
        sqs.start_message_move_task(
            SourceArn=arn_of(sqs, dlq),
            DestinationArn=arn_of(sqs, elsewhere),
            MaxNumberOfMessagesPerSecond=1,
        )
    finally:
        assert first.stop() == 0, first.output()

    second = start_hopper("--database-url", database, "--relaxed-timing", log=log)
    try:
        sqs = client(second.url)
        source_arn = arn_of(sqs, dlq)
        deadline = time.monotonic() + TASK_DEADLINE
        while True:
            [task] = sqs.list_message_move_tasks(SourceArn=source_arn)["Results"]
            if task["Status"] != "RUNNING":
                break
            assert time.monotonic() < deadline, f"the task was not resumed: {task}"
            time.sleep(POLL_PAUSE)  # the next look at the task's status
        assert task["Status"] == "COMPLETED"
        assert task["ApproximateNumberOfMessagesToMove"] == 4
        counts = ["ApproximateNumberOfMessages"]
        moved = sqs.get_queue_attributes(QueueUrl=elsewhere, AttributeNames=counts)
        left = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=counts)
        assert moved["Attributes"]["ApproximateNumberOfMessages"] == "4"
        assert left["Attributes"]["ApproximateNumberOfMessages"] == "0"
    finally:
        assert second.stop() == 0, second.output()
