"""hopper.testing in a user's test suite: a suite of its own, in a directory with nothing
but its test file, run by `python -m pytest` in a subprocess, uses `HopperServer` and
the `hopper_server` fixture (registered through the `pytest11` entry point) with boto3:
on the in-memory store with nothing else set up, and on PostgreSQL."""

from __future__ import annotations

import asyncio
import gc
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from botocore.config import Config

from hopper.testing import HopperServer
from tests.postgres.databases import drop, dsn_for, empty_database

from .processes import server_environment

USER_SUITE = '''
import boto3
import pytest

from hopper.testing import HopperServer

DATABASE_URL = {database_url!r}


def sqs_for(endpoint_url):
    return boto3.client("sqs", endpoint_url=endpoint_url, region_name="us-east-1",
                        aws_access_key_id="x", aws_secret_access_key="x")


def test_hopper_server_serves_boto3_and_reset_empties_it():
    with HopperServer(database_url=DATABASE_URL) as server:
        sqs = sqs_for(server.endpoint_url)
        url = sqs.create_queue(QueueName="jobs")["QueueUrl"]
        sqs.send_message(QueueUrl=url, MessageBody="hello")
        assert sqs.receive_message(QueueUrl=url)["Messages"][0]["Body"] == "hello"
        sqs.send_message(QueueUrl=url, MessageBody="left behind")
        server.reset()
        assert sqs.list_queues().get("QueueUrls", []) == []
        url = sqs.create_queue(QueueName="jobs")["QueueUrl"]
        assert sqs.receive_message(QueueUrl=url).get("Messages", []) == []


def test_the_fixture_serves_boto3(hopper_server):
    sqs = sqs_for(hopper_server.endpoint_url)
    url = sqs.create_queue(QueueName="left-by-the-first-test")["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="hello")


def test_the_fixture_is_emptied_between_tests(hopper_server):
    sqs = sqs_for(hopper_server.endpoint_url)
    assert sqs.list_queues().get("QueueUrls", []) == []
    sqs.create_queue(QueueName="kept-for-the-next-test")


@pytest.mark.hopper_keep
def test_a_marked_test_keeps_what_the_test_before_left(hopper_server):
    urls = sqs_for(hopper_server.endpoint_url).list_queues()["QueueUrls"]
    assert [url.rsplit("/", 1)[1] for url in urls] == ["kept-for-the-next-test"]
'''

# The user's own strictness: unknown markers and warnings in tests are errors.
USER_INI = "[pytest]\naddopts = --strict-markers\nfilterwarnings = error\n"


def run_user_suite(directory: Path, database_url: str | None, *options: str) -> str:
    (directory / "test_user.py").write_text(USER_SUITE.format(database_url=database_url))
    (directory / "pytest.ini").write_text(USER_INI)
    done = subprocess.run(
        # pytest-asyncio is this project's test dependency, not the user's: it would
        # warn at start-up about an ini option this suite has no reason to set.
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:asyncio",
         *options],
        cwd=directory, env=server_environment(), capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.fixture
def database_url() -> Iterator[str]:
    """An empty database of the test's own, which the servers migrate."""
    database = asyncio.run(empty_database())
    try:
        yield dsn_for(database)
    finally:
        asyncio.run(drop(database))


def test_a_users_suite_runs_on_memory_with_nothing_else_set_up(tmp_path: Path):
    assert "4 passed" in run_user_suite(tmp_path, None)


def test_a_users_suite_runs_on_postgres(tmp_path: Path, database_url: str):
    output = run_user_suite(tmp_path, database_url, "--hopper-database-url", database_url)
    assert "4 passed" in output


def test_hopper_server_says_in_one_line_why_it_cannot_start(tmp_path: Path):
    config = tmp_path / "bad.toml"
    config.write_text(
        '[[queues]]\nname = "q"\ndead_letter = { queue = "missing", max_receive_count = 2 }\n'
    )
    with pytest.raises(RuntimeError) as refused:
        HopperServer(config=str(config)).start()
    assert str(refused.value) == (
        "hopper could not start: hopper: declared queue q: Invalid value for the parameter "
        "RedrivePolicy. Reason: Dead letter target does not exist."
    )


CREDENTIALS = """
[[credentials]]
access_key = "AKIDMINE"
secret_key = "mine"
account_id = "111111111111"

[[credentials]]
access_key = "AKIDTHEIRS"
secret_key = "theirs"
account_id = "222222222222"
"""


def test_reset_empties_the_queues_of_every_account(tmp_path: Path):
    credentials = tmp_path / "credentials.toml"
    credentials.write_text(CREDENTIALS)
    with HopperServer(auth="sigv4", credentials_file=str(credentials)) as server:
        clients = [
            boto3.client("sqs", endpoint_url=server.endpoint_url, region_name="us-east-1",
                         aws_access_key_id=key, aws_secret_access_key=secret,
                         config=Config(retries={"total_max_attempts": 1}))
            for key, secret in (("AKIDMINE", "mine"), ("AKIDTHEIRS", "theirs"))
        ]
        for sqs in clients:
            url = sqs.create_queue(QueueName="jobs")["QueueUrl"]
            sqs.send_message(QueueUrl=url, MessageBody="hello")
        server.reset()
        for sqs in clients:
            assert sqs.list_queues().get("QueueUrls", []) == []


def test_hopper_server_leaves_its_hosts_garbage_collector_alone():
    # `hopper serve` tunes the collector for serving (hopper.app.collect_less); a server
    # inside someone's test suite must not retune theirs.
    before = gc.get_threshold(), gc.get_freeze_count()
    with HopperServer() as server:
        sqs = boto3.client("sqs", endpoint_url=server.endpoint_url, region_name="us-east-1",
                           aws_access_key_id="x", aws_secret_access_key="x")
        url = sqs.create_queue(QueueName="collected")["QueueUrl"]
        sqs.send_message(QueueUrl=url, MessageBody="hello")
    assert (gc.get_threshold(), gc.get_freeze_count()) == before


def test_a_serving_process_freezes_start_up_and_collects_less():
    done = subprocess.run(
        [sys.executable, "-c", "import gc; from hopper.app import GC_THRESHOLDS, collect_less;"
         " collect_less(); print(gc.get_threshold() == GC_THRESHOLDS, gc.get_freeze_count() > 0)"],
        env=server_environment(), capture_output=True, text=True, timeout=60,
    )
    assert done.stdout.split() == ["True", "True"], done.stderr
