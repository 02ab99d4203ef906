"""`--config FILE`: settings and declared queues, created or updated at start-up
(idempotently, whatever order dead-letter queues come in), reported one line per
queue; `declared_queues_only` refuses CreateQueue and DeleteQueue with AccessDenied."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from tests.postgres.databases import drop, dsn_for, empty_database

from .processes import HopperProcess, server_environment, start_hopper
from .query_client import QueryClient

DECLARED = """
[settings]
declared_queues_only = true
relaxed_timing = true

[[queues]]
name = "orders"
attributes = { VisibilityTimeout = 45, ReceiveMessageWaitTimeSeconds = 20 }
dead_letter = { queue = "orders-dead", max_receive_count = 3 }
tags = { team = "billing", tier = "gold" }

[[queues]]
name = "orders-dead"
attributes = { MessageRetentionPeriod = 1209600 }

[[queues]]
name = "events.fifo"
attributes = { FifoQueue = true, ContentBasedDeduplication = true }
"""


def sqs_client(url: str):
    return boto3.client(
        "sqs", endpoint_url=url, region_name="us-east-1",
        aws_access_key_id="test", aws_secret_access_key="test",
        config=Config(retries={"total_max_attempts": 1}),
    )


def declared_lines(server: HopperProcess) -> dict[str, str]:
    lines = [line for line in server.output().splitlines() if "declared queue " in line]
    outcome = {}
    for line in lines:
        name, _, what = line.split("declared queue ", 1)[1].partition(": ")
        outcome[name] = what
    return outcome


@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    name = asyncio.run(empty_database())
    try:
        yield dsn_for(name)
    finally:
        asyncio.run(drop(name))


def serve(config: Path, database: str, scratch: Path, label: str) -> HopperProcess:
    return start_hopper(
        "--config", str(config), "--database-url", database,
        log=scratch / f"{label}.log",
    )


@pytest.fixture(scope="module")
def declared(database: str) -> Iterator[tuple[HopperProcess, Path, Path]]:
    """A server on Postgres started with DECLARED: (server, config file, scratch dir)."""
    with tempfile.TemporaryDirectory() as scratch:
        config = Path(scratch) / "hopper.toml"
        config.write_text(DECLARED)
        server = serve(config, database, Path(scratch), "first")
        try:
            yield server, config, Path(scratch)
        finally:
            assert server.stop() == 0, server.output()


def test_declared_queues_are_created_with_their_attributes_tags_and_dead_letter_queue(declared):
    server, _, _ = declared
    sqs = sqs_client(server.url)
    assert declared_lines(server) == {
        "orders": "created", "orders-dead": "created", "events.fifo": "created",
    }
    orders = sqs.get_queue_url(QueueName="orders")["QueueUrl"]
    values = sqs.get_queue_attributes(QueueUrl=orders, AttributeNames=["All"])["Attributes"]
    assert (values["VisibilityTimeout"], values["ReceiveMessageWaitTimeSeconds"]) == ("45", "20")
    policy = json.loads(values["RedrivePolicy"])
    assert policy == {
        "deadLetterTargetArn": "arn:aws:sqs:us-east-1:000000000000:orders-dead",
        "maxReceiveCount": 3,
    }
    assert sqs.list_queue_tags(QueueUrl=orders)["Tags"] == {"team": "billing", "tier": "gold"}
    fifo = sqs.get_queue_url(QueueName="events.fifo")["QueueUrl"]
    fifo_values = sqs.get_queue_attributes(QueueUrl=fifo, AttributeNames=["All"])["Attributes"]
    assert fifo_values["ContentBasedDeduplication"] == "true"


def error_of(call, **kwargs) -> tuple[str, int, str]:
    with pytest.raises(ClientError) as raised:
        call(**kwargs)
    response = raised.value.response
    return (response["Error"]["Code"], response["ResponseMetadata"]["HTTPStatusCode"],
            response["Error"]["Message"])


def test_declared_queues_only_refuses_creating_and_deleting_queues(declared):
    server, _, _ = declared
    sqs = sqs_client(server.url)
    code, status, message = error_of(sqs.create_queue, QueueName=f"new-{uuid.uuid4().hex[:6]}")
    assert (code, status) == ("AccessDenied", 403)
    assert "declared in its configuration" in message
    orders = sqs.get_queue_url(QueueName="orders")["QueueUrl"]
    assert error_of(sqs.delete_queue, QueueUrl=orders)[:2] == ("AccessDenied", 403)
    # "Create if missing" of a declared queue answers its URL, as AWS's idempotent
    # CreateQueue does, and a different attribute is QueueNameExists: nothing changes.
    assert sqs.create_queue(QueueName="orders")["QueueUrl"] == orders
    assert sqs.create_queue(QueueName="orders", Attributes={"VisibilityTimeout": "45"})
    assert error_of(
        sqs.create_queue, QueueName="orders", Attributes={"VisibilityTimeout": "46"}
    )[0] == "QueueAlreadyExists"
    assert sqs.get_queue_url(QueueName="orders")["QueueUrl"] == orders


def test_declared_queues_only_refuses_in_the_query_protocol_too(declared):
    server, _, _ = declared
    with QueryClient(server.url) as query:
        answer = query.call("CreateQueue", {"QueueName": "not-declared"})
    assert answer.status == 403
    assert answer.error is not None
    assert (answer.error["Type"], answer.error["Code"]) == ("Sender", "AccessDenied")


def test_a_restart_with_the_same_file_changes_nothing_and_a_changed_file_updates(
    declared, database
):
    first, config, scratch = declared
    again = serve(config, database, scratch, "again")
    try:
        assert declared_lines(again) == {
            "orders": "unchanged", "orders-dead": "unchanged", "events.fifo": "unchanged",
        }
    finally:
        assert again.stop() == 0, again.output()
    changed = scratch / "changed.toml"
    changed.write_text(
        DECLARED.replace("VisibilityTimeout = 45", "VisibilityTimeout = 90")
        .replace('tier = "gold"', 'tier = "silver"')
        .replace("max_receive_count = 3", "max_receive_count = 4")
    )
    updated = serve(changed, database, scratch, "updated")
    try:
        assert declared_lines(updated)["orders"] == (
            "updated (VisibilityTimeout, tags, RedrivePolicy)"
        )
        sqs = sqs_client(updated.url)
        orders = sqs.get_queue_url(QueueName="orders")["QueueUrl"]
        values = sqs.get_queue_attributes(QueueUrl=orders, AttributeNames=["All"])["Attributes"]
        assert values["VisibilityTimeout"] == "90"
        assert json.loads(values["RedrivePolicy"])["maxReceiveCount"] == 4
        assert sqs.list_queue_tags(QueueUrl=orders)["Tags"]["tier"] == "silver"
    finally:
        assert updated.stop() == 0, updated.output()


def test_a_dead_letter_queue_may_be_declared_after_its_source_on_memory(tmp_path):
    config = tmp_path / "hopper.toml"
    config.write_text(
        '[[queues]]\nname = "work"\ndead_letter = { queue = "work-dead", max_receive_count = 1 }\n'
        '[[queues]]\nname = "work-dead"\n'
    )
    server = start_hopper("--config", str(config), log=tmp_path / "hopper.log")
    try:
        sqs = sqs_client(server.url)
        work = sqs.get_queue_url(QueueName="work")["QueueUrl"]
        sqs.send_message(QueueUrl=work, MessageBody="poison")
        sqs.receive_message(QueueUrl=work, VisibilityTimeout=0)
        sqs.receive_message(QueueUrl=work)  # over maxReceiveCount: moved
        dead = sqs.get_queue_url(QueueName="work-dead")["QueueUrl"]
        [message] = sqs.receive_message(QueueUrl=dead, WaitTimeSeconds=1)["Messages"]
        assert message["Body"] == "poison"
        # Without declared_queues_only the API may still create queues.
        sqs.create_queue(QueueName="ad-hoc")
    finally:
        assert server.stop() == 0, server.output()


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ('[[queues]]\nname = "q"\nattributes = { VisibilityTimeout = 43201 }\n',
         "queue q: Invalid value for the parameter VisibilityTimeout"),
        ('[[queues]]\nname = "q"\nattributes = { Colour = "blue" }\n',
         "queue q: Unknown Attribute Colour"),
        ('[[queues]]\nname = "q"\ncolour = "blue"\n', "queue q: unknown keys colour"),
        ('[[queues]]\nname = "q"\n[[queues]]\nname = "q"\n', "queue q is declared twice"),
        ("[settings]\nport = \"many\"\n", "setting port has the wrong type"),
        ("[settings]\nwizard = true\n", "unknown setting 'wizard'"),
        ("[[queues\n", "cannot read the config file"),
    ],
)
def test_an_unusable_config_file_stops_start_up_with_one_line(tmp_path, text, complaint):
    config = tmp_path / "bad.toml"
    config.write_text(text)
    done = subprocess.run(
        [sys.executable, "-m", "hopper", "serve", "--port", "0", "--config", str(config)],
        env=server_environment(), capture_output=True, text=True, timeout=30,
    )
    assert done.returncode != 0
    assert complaint in done.stderr + done.stdout
    assert "Traceback" not in done.stderr
