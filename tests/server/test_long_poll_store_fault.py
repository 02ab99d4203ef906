"""A long poll parked while its database goes away keeps waiting, retries its claim
while the store reconnects, and delivers a message sent once the database is back.

Postgres only: the fault is the database's. The shared PostgreSQL server is never
restarted; instead the server's own database stops taking connections and every
connection to it is cut (`pg_terminate_backend`, the fault a restart causes), then is
opened again."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import httpx
import pytest

from tests.postgres.databases import ADMIN_DSN, drop, dsn_for, empty_database

from .conftest import SERVER_SCHEMA
from .processes import HopperProcess, start_hopper, wait_for_metric

WAITING = "hopper_long_polls_waiting"
RETRY_LINE = "a long poll on patient retries its claim"


@pytest.fixture
def database() -> Iterator[str]:
    name = asyncio.run(empty_database())
    try:
        yield name
    finally:
        asyncio.run(_allow_connections(name, True))  # however the test ended
        asyncio.run(drop(name))


@pytest.fixture
def server(database: str, tmp_path: Path) -> Iterator[HopperProcess]:
    hopper = start_hopper(
        "--database-url", dsn_for(database), "--database-schema", SERVER_SCHEMA,
        "--relaxed-timing", log=tmp_path / "hopper.log",
    )
    try:
        yield hopper
    finally:
        assert hopper.stop() == 0, hopper.output()


async def _allow_connections(database: str, allowed: bool) -> None:
    admin = await asyncpg.connect(ADMIN_DSN)
    try:
        await admin.execute(
            f'ALTER DATABASE "{database}" ALLOW_CONNECTIONS {str(allowed).lower()}'
        )
        if not allowed:
            await admin.fetch(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = $1 AND pid <> pg_backend_pid()",
                database,
            )
    finally:
        await admin.close()


def _wait_for_output(server: HopperProcess, line: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while line not in server.output():
        if time.monotonic() > deadline:
            pytest.fail(f"the server never logged {line!r}:\n{server.output()}")
        time.sleep(0.05)  # the log is a file: look again shortly


def test_a_long_poll_parked_across_a_database_outage_answers_200(server, database):
    # given a long poll parked on an empty queue
    queue = f"{server.url}/000000000000/patient"
    assert httpx.post(server.url, data={"Action": "CreateQueue", "QueueName": "patient"},
                      ).status_code == 200
    answers: list[httpx.Response] = []
    poll = threading.Thread(target=lambda: answers.append(httpx.post(
        queue, data={"Action": "ReceiveMessage", "WaitTimeSeconds": "20"}, timeout=60,
    )))
    poll.start()
    wait_for_metric(server.url, WAITING, 1.0)

    # when the database refuses connections and cuts the server's, until the poll has
    # met the failure, then comes back
    asyncio.run(_allow_connections(database, False))
    _wait_for_output(server, RETRY_LINE)
    asyncio.run(_allow_connections(database, True))

    # then a message sent after the reconnection reaches the poll, which answers 200
    for _ in range(100):
        sent = httpx.post(queue, data={"Action": "SendMessage", "MessageBody": "after"})
        if sent.status_code == 200:
            break
        time.sleep(0.1)  # the store is still reconnecting: send again
    assert sent.status_code == 200, sent.text
    poll.join()
    [answer] = answers
    assert answer.status_code == 200, answer.text
    assert "<Body>after</Body>" in answer.text
