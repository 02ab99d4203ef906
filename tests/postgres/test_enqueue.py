"""Enqueue inside the application's own transaction: `hopper.enqueue.send` on the
application's asyncpg connection, and the SQL function `send_message` of migrations
0050 and 0080. The message exists iff the transaction commits, a long poll already
waiting on a live server receives it, and both paths keep SendMessage's rules at their
edges, with its texts.

Postgres-only: the transaction is the application's PostgreSQL transaction.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import asyncpg
import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from hopper import enqueue
from hopper.core.model import QueueKey
from hopper.core.service import QueueService
from hopper.enqueue import rules as send_rules
from hopper.store.postgres.listener import CHANNEL
from hopper.wire.errors import CODES, SqsError
from tests.server.processes import HopperProcess, start_hopper

from .databases import SCHEMA

WAIT_SECONDS = 10.0
MAX = 1024  # the test queue's MaximumMessageSize
ACCOUNT = "000000000000"


@contextmanager
def serving(database: str, log: Path) -> Iterator[HopperProcess]:
    server = start_hopper("--database-url", database, "--database-schema", SCHEMA, log=log)
    try:
        yield server
    finally:
        code = server.stop()
    assert code == 0, server.output()


def client(server: HopperProcess) -> Any:
    return boto3.client(
        "sqs", endpoint_url=server.url, region_name="us-east-1",
        aws_access_key_id="test", aws_secret_access_key="test",
        config=Config(retries={"total_max_attempts": 1}, read_timeout=30),
    )


@pytest.fixture
def server(database: str, tmp_path: Path) -> Iterator[HopperProcess]:
    with serving(database, tmp_path / "hopper.log") as running:
        yield running


@pytest.fixture
def sqs(server: HopperProcess) -> Any:
    sqs = client(server)
    sqs.create_queue(QueueName="jobs", Attributes={"MaximumMessageSize": str(MAX)})
    return sqs


@pytest.fixture
async def jobs(open_store) -> None:
    """The queue "jobs", created in-process (for the tests that need no server)."""
    async with open_store() as store:
        service = QueueService(store)
        await service.create_queue(QueueKey(ACCOUNT, "jobs"), {"maximum_message_size": MAX}, {})
        await service.create_queue(QueueKey(ACCOUNT, "ordered.fifo"), {"fifo": True}, {})


@pytest.fixture
async def app(database: str) -> Any:
    """The application's own connection (its own search path, not hopper's)."""
    connection = await asyncpg.connect(database)
    try:
        yield connection
    finally:
        await connection.close()


def bodies(sqs: Any, url: str) -> list[str]:
    answer = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)
    return [m["Body"] for m in answer.get("Messages", [])]


# --- exists iff committed -----------------------------------------------------------------


async def test_a_rolled_back_send_leaves_no_message(app, sqs):
    url = sqs.get_queue_url(QueueName="jobs")["QueueUrl"]
    transaction = app.transaction()
    await transaction.start()
    await enqueue.send(app, "jobs", "never")
    await transaction.rollback()
    await enqueue_committed(app, "jobs", "after")  # a later send still works
    assert await asyncio.to_thread(bodies, sqs, url) == ["after"]


async def enqueue_committed(app, queue: str, body: str, **options: Any) -> dict[str, Any]:
    async with app.transaction():
        return await enqueue.send(app, queue, body, **options)


async def test_the_message_commits_with_the_applications_rows(app, sqs):
    await app.execute("CREATE TABLE public.orders (id int PRIMARY KEY)")
    async with app.transaction():
        await app.execute("INSERT INTO orders VALUES (1)")  # the app's own search path
        sent = await enqueue.send(app, sqs.get_queue_url(QueueName="jobs")["QueueUrl"], "ship 1")
        # The application's search path is its own again within the transaction.
        assert await app.fetchval("SELECT count(*) FROM orders") == 1
    url = sqs.get_queue_url(QueueName="jobs")["QueueUrl"]
    [message] = (await asyncio.to_thread(sqs.receive_message, QueueUrl=url))["Messages"]
    assert (message["MessageId"], message["Body"]) == (sent["MessageId"], "ship 1")
    assert message["MD5OfBody"] == sent["MD5OfMessageBody"]


async def test_the_answer_carries_sendmessages_md5s(app, sqs):
    url = sqs.get_queue_url(QueueName="jobs")["QueueUrl"]
    attributes = {"kind": {"DataType": "String", "StringValue": "invoice"}}
    mine = await enqueue_committed(app, "jobs", "same", attributes=attributes)
    theirs = await asyncio.to_thread(
        sqs.send_message, QueueUrl=url, MessageBody="same", MessageAttributes=attributes
    )
    for digest in ("MD5OfMessageBody", "MD5OfMessageAttributes"):
        assert mine[digest] == theirs[digest]
    received = await asyncio.to_thread(
        sqs.receive_message, QueueUrl=url, MaxNumberOfMessages=10,
        MessageAttributeNames=["All"],
    )
    assert {m["MD5OfMessageAttributes"] for m in received["Messages"]} == {
        mine["MD5OfMessageAttributes"]
    }


async def test_send_outside_a_transaction_is_refused(app, jobs):
    with pytest.raises(enqueue.NotInTransaction):
        await enqueue.send(app, "jobs", "no transaction")


# --- SendMessage's rules, the same code -------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "name", "text"),
    [
        ({"body": "x" * (MAX + 1)}, "InvalidParameterValue",
         f"Message must be shorter than {MAX} bytes."),
        ({"body": ""}, "MissingParameter", "MessageBody"),
        ({"body": "bell\x07"}, "InvalidMessageContents", "Invalid binary character"),
        ({"delay_seconds": 901}, "InvalidParameterValue", "DelaySeconds must be >= 0"),
        ({"queue": "missing"}, "QueueDoesNotExist", "does not exist"),
        ({"attributes": {"n": {"DataType": "Number", "StringValue": "one"}}},
         "InvalidParameterValue", "to a number"),
    ],
)
async def test_a_send_sqs_would_refuse_is_refused_with_its_error(app, jobs, options, name, text):
    arguments = {"queue": "jobs", "body": "ok", **options}
    async with app.transaction():
        with pytest.raises(SqsError) as raised:
            await enqueue.send(app, arguments.pop("queue"), arguments.pop("body"), **arguments)
    assert raised.value.name == name
    assert text in raised.value.message


async def test_the_edges_that_sqs_accepts_are_accepted(app, sqs):
    url = sqs.get_queue_url(QueueName="jobs")["QueueUrl"]
    await enqueue_committed(app, "jobs", "x" * MAX)
    await enqueue_committed(app, "jobs", "later", delay_seconds=900)
    attributes = await asyncio.to_thread(
        sqs.get_queue_attributes, QueueUrl=url, AttributeNames=["All"]
    )
    counts = attributes["Attributes"]
    assert (counts["ApproximateNumberOfMessages"], counts["ApproximateNumberOfMessagesDelayed"]) \
        == ("1", "1")


# --- woken at commit ------------------------------------------------------------------------


class Heard:
    """Notifications on hopper's channel, heard by a LISTEN connection of the test's."""

    def __init__(self) -> None:
        self.payloads: asyncio.Queue[str] = asyncio.Queue()

    def __call__(self, connection: object, pid: int, channel: str, payload: object) -> None:
        self.payloads.put_nowait(str(payload))

    async def until(self, notifier: asyncpg.Connection, sentinel: str) -> list[str]:
        """What arrives before `sentinel`, which `notifier` commits now: notifications
        are delivered in commit order, so anything not among them had not been
        delivered when the sentinel's transaction committed."""
        await notifier.execute("SELECT pg_notify($1, $2)", CHANNEL, sentinel)
        heard = []
        async with asyncio.timeout(WAIT_SECONDS):
            while (text := await self.payloads.get()) != sentinel:
                heard.append(text)
        return [text for text in heard if text.startswith("enqueue ")]


async def test_the_wake_up_is_delivered_at_commit_and_dropped_on_rollback(app, jobs, database):
    listener = await asyncpg.connect(database)
    notifier = await asyncpg.connect(database)
    heard = Heard()
    await listener.add_listener(CHANNEL, heard)
    try:
        for outcome in ("rollback", "commit"):
            transaction = app.transaction()
            await transaction.start()
            await enqueue.send(app, "jobs", outcome)
            assert await heard.until(notifier, "before") == []
            await (transaction.rollback() if outcome == "rollback" else transaction.commit())
            expected = [] if outcome == "rollback" else ["enqueue 000000000000/jobs"]
            assert await heard.until(notifier, "after") == expected
    finally:
        await listener.close()
        await notifier.close()


# Locks on the messages table held or awaited by backends other than the asking one.
MESSAGES_LOCKS = f"""
    SELECT count(*) FILTER (WHERE NOT granted) AS waiting, count(*) AS all
    FROM pg_locks WHERE relation = '{SCHEMA}.messages'::regclass AND pid <> pg_backend_pid()
"""


async def wait_for_locks(monitor: asyncpg.Connection, done) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        if done(await monitor.fetchrow(MESSAGES_LOCKS)):
            return
        await asyncio.sleep(0.002)
    raise AssertionError("the long poll's first look was not seen in pg_locks")


@pytest.mark.parametrize("path", ["python", "sql"])
async def test_a_committed_send_wakes_a_long_poll_already_waiting(app, sqs, database, path):
    url = sqs.get_queue_url(QueueName="jobs")["QueueUrl"]
    returned: dict[str, Any] = {}

    def long_poll() -> None:
        returned["answer"] = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=20)
        returned["at"] = time.monotonic()

    # The poll's first look is held at a table lock until seen waiting, then let go;
    # once no lock on messages is left, the look has run and the poll is parked (as in
    # test_processes.py), so only a wake-up or its fallback look can bring the message.
    monitor = await asyncpg.connect(database)
    poller = threading.Thread(target=long_poll)
    try:
        lock = monitor.transaction()
        await lock.start()
        await monitor.execute(f"LOCK TABLE {SCHEMA}.messages IN EXCLUSIVE MODE")
        poller.start()
        try:
            await wait_for_locks(monitor, lambda locks: locks["waiting"] > 0)
        finally:
            await lock.rollback()
        await wait_for_locks(monitor, lambda locks: locks["all"] == 0)
    finally:
        await monitor.close()

    async with app.transaction():
        if path == "python":
            message_id = (await enqueue.send(app, "jobs", "wake up"))["MessageId"]
        else:
            message_id = await app.fetchval(
                f"SELECT {SCHEMA}.send_message('jobs', 'wake up')"
            )
    committed = time.monotonic()
    await asyncio.to_thread(poller.join, 25.0)
    assert not poller.is_alive()
    [message] = returned["answer"]["Messages"]
    assert (message["MessageId"], message["Body"]) == (message_id, "wake up")
    print(f"\n{path}: received {1000 * (returned['at'] - committed):.1f} ms after commit")


# --- the SQL function -----------------------------------------------------------------------


async def sql_send(app, *args: Any) -> str:
    placeholders = ", ".join(f"${i}" for i in range(1, len(args) + 1))
    async with app.transaction():
        return await app.fetchval(f"SELECT {SCHEMA}.send_message({placeholders})", *args)


async def test_the_sql_function_commits_and_rolls_back_with_the_transaction(app, sqs):
    url = sqs.get_queue_url(QueueName="jobs")["QueueUrl"]
    transaction = app.transaction()
    await transaction.start()
    await app.fetchval(f"SELECT {SCHEMA}.send_message('jobs', 'rolled back')")
    await transaction.rollback()
    message_id = await sql_send(app, "jobs", "committed")
    [message] = (await asyncio.to_thread(sqs.receive_message, QueueUrl=url))["Messages"]
    assert (message["MessageId"], message["Body"]) == (message_id, "committed")


# Each case: the same send through the core (hopper.enqueue) and through SQL; both
# accept it or both refuse it with the same SQS error name.
EDGES = [
    ("x" * MAX, None, None),
    ("x" * (MAX + 1), None, "InvalidParameterValue"),
    ("é" * (MAX // 2), None, None),  # bytes, not characters
    ("é" * (MAX // 2) + "x", None, "InvalidParameterValue"),
    ("", None, "MissingParameter"),
    ("tab\tnewline\ncr\r", None, None),
    ("bell\x07", None, "InvalidMessageContents"),
    ("\ufffe", None, "InvalidMessageContents"),
    ("\ufffd", None, None),
    ("delayed", 0, None),
    ("delayed", 900, None),
    ("delayed", 901, "InvalidParameterValue"),
    ("delayed", -1, "InvalidParameterValue"),
]


@pytest.mark.parametrize(("body", "delay", "error"), EDGES)
async def test_the_sql_function_keeps_the_cores_rules_at_their_edges(app, jobs, body, delay, error):
    try:
        await enqueue_committed(app, "jobs", body, delay_seconds=delay)
        core = None
    except SqsError as refused:
        core = f"{refused.name}: {refused.message}"
    try:
        await sql_send(app, "jobs", body, delay)
        sql = None
    except asyncpg.PostgresError as refused:
        sql = str(refused)
    # The same refusal, word for word, or the same acceptance.
    assert core == sql
    assert (core or "").split(":", 1)[0] == (error or "")


async def test_the_sql_function_refuses_a_missing_queue_and_fifo_queues(app, jobs):
    with pytest.raises(asyncpg.PostgresError, match="^QueueDoesNotExist"):
        await sql_send(app, "missing", "x")
    with pytest.raises(asyncpg.PostgresError, match="^UnsupportedOperation"):
        await sql_send(app, "ordered.fifo", "x")


# Each case: a SendMessage both the HTTP API and the SQL function must refuse, as (queue,
# body, DelaySeconds). "full" holds its ceiling of one message.
REFUSALS = [
    ("jobs", "x" * (MAX + 1), None),
    ("jobs", "é" * (MAX // 2) + "x", None),
    ("jobs", "", None),
    ("jobs", "bell\x07", None),
    ("jobs", "\ufffe", None),
    ("jobs", "late", 901),
    ("jobs", "early", -1),
    ("missing", "x", None),
    ("full", "one too many", None),
]


async def test_the_sql_function_and_the_http_send_refuse_alike_with_the_same_texts(app, sqs):
    # The function reads its rules from hopper's code (hopper/enqueue/rules.py), so a
    # refusal is word for word the one SendMessage gives over HTTP.
    full = sqs.create_queue(QueueName="full", Attributes={"Hopper.MaximumQueueDepth": "1"})
    sqs.send_message(QueueUrl=full["QueueUrl"], MessageBody="the one")
    base = sqs.get_queue_url(QueueName="jobs")["QueueUrl"].rsplit("/", 1)[0]
    for queue, body, delay in REFUSALS:
        options = {} if delay is None else {"DelaySeconds": delay}
        with pytest.raises(ClientError) as http:
            await asyncio.to_thread(
                sqs.send_message, QueueUrl=f"{base}/{queue}", MessageBody=body, **options
            )
        with pytest.raises(asyncpg.PostgresError) as sql:
            await sql_send(app, queue, body, delay)
        name, _, text = str(sql.value).partition(": ")
        error = http.value.response["Error"]
        assert (CODES[name].query_code, text) == (error["Code"], error["Message"]), queue


async def test_the_sql_function_takes_its_rules_from_the_hopper_that_migrated(app, jobs, database):
    # A rule changed in the database alone is put back by the next migration.
    await app.execute(f"UPDATE {SCHEMA}.send_rules SET max_delay = 1000")
    assert await sql_send(app, "jobs", "delayed", 901)
    await send_rules.migrate(database, SCHEMA)
    with pytest.raises(asyncpg.PostgresError, match="DelaySeconds must be >= 0 and <= 900"):
        await sql_send(app, "jobs", "delayed", 901)


async def test_the_sql_function_without_its_rules_says_to_migrate(app, jobs):
    await app.execute(f"DELETE FROM {SCHEMA}.send_rules")
    with pytest.raises(asyncpg.PostgresError, match="hopper migrate"):
        await sql_send(app, "jobs", "x")
