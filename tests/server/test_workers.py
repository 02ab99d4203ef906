"""`hopper serve --workers N`: N server processes over one database, and a refusal
for the in-memory store, whose queues cannot be shared between processes."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from botocore.config import Config

from tests.postgres.databases import drop, dsn_for, empty_database

from .processes import STOP_TIMEOUT, server_environment, start_hopper


@pytest.fixture
def database_url() -> Iterator[str]:
    """An empty database of the test's own, which the server migrates."""
    database = asyncio.run(empty_database())
    try:
        yield dsn_for(database)
    finally:
        asyncio.run(drop(database))


@pytest.mark.parametrize(
    ("options", "environment"),
    [(["--workers", "2"], {}), ([], {"HOPPER_WORKERS": "2"})],
    ids=["flag", "environment"],
)
def test_several_workers_without_a_database_are_refused_with_a_reason(
    options: list[str], environment: dict[str, str]
) -> None:
    finished = subprocess.run(
        [sys.executable, "-m", "hopper", "serve", "--port", "0", *options],
        env=server_environment() | environment,
        capture_output=True, text=True, timeout=STOP_TIMEOUT,
    )
    assert finished.returncode == 2
    assert "--workers 2 needs --database-url" in finished.stderr
    assert "in-memory store" in finished.stderr


def worker_processes(parent: int) -> list[int]:
    """The pids of `parent`'s uvicorn workers (multiprocessing's spawned children)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            # The command name is in parentheses and may hold spaces: split after it.
            fields = stat.read_text().rpartition(")")[2].split()
            command = (stat.parent / "cmdline").read_bytes()
        except OSError:
            continue  # the process ended while we looked
        if int(fields[1]) == parent and b"spawn_main" in command:
            found.append(int(stat.parent.name))
    return found


def test_two_workers_over_one_database_serve_boto3_and_stop_on_sigterm(
    database_url: str, tmp_path: Path
) -> None:
    server = start_hopper(
        "--workers", "2", "--database-url", database_url, log=tmp_path / "hopper.log"
    )
    try:
        workers = worker_processes(server.process.pid)
        assert len(workers) == 2, server.output()
        sqs = boto3.client(
            "sqs", endpoint_url=server.url, region_name="us-east-1",
            aws_access_key_id="test", aws_secret_access_key="test",
            config=Config(retries={"total_max_attempts": 1}),
        )
        url = sqs.create_queue(QueueName="shared")["QueueUrl"]
        # Each request may land on either worker: they agree because the queue is in
        # the database, not in a process.
        sent = {
            sqs.send_message(QueueUrl=url, MessageBody=f"m{n}")["MessageId"] for n in range(20)
        }
        received = set()
        for _ in range(20):  # bounded: 20 receives of up to 10 are plenty for 20 messages
            batch = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
            if not batch:
                break
            received |= {message["MessageId"] for message in batch}
            sqs.delete_message_batch(QueueUrl=url, Entries=[
                {"Id": str(n), "ReceiptHandle": m["ReceiptHandle"]} for n, m in enumerate(batch)
            ])
        assert received == sent
        assert sqs.get_queue_attributes(
            QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"]
        )["Attributes"]["ApproximateNumberOfMessages"] == "0"
    finally:
        code = server.stop(signal.SIGTERM)
    assert code == 0, server.output()
    # The supervisor stops and reaps its workers before it exits.
    assert not [pid for pid in workers if Path(f"/proc/{pid}").exists()]
