"""A long poll that starts while its database is down waits the outage out within its
own time, as one parked across it does: 503 only once its time is up, a message sent
after the database is back if it comes back in time, never a 500.

Postgres only: the fault is the database's. The test stops and starts a PostgreSQL
server of its own (`pg_ctl stop -m immediate`, the crash a restart under load is); the
session's shared server is never stopped."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.postgres.cluster import Cluster, new_cluster

from .processes import HopperProcess, start_hopper

pytestmark = pytest.mark.slow

QUEUE = "patient"
RETRY_LINE = f"a long poll on {QUEUE} retries"


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    own = new_cluster()
    try:
        yield own
    finally:
        own.remove()


@pytest.fixture
def server(cluster: Cluster, tmp_path: Path) -> Iterator[HopperProcess]:
    hopper = start_hopper("--database-url", cluster.dsn, "--relaxed-timing",
                          log=tmp_path / "hopper.log")
    try:
        yield hopper
    finally:
        assert hopper.stop() == 0, hopper.output()


def _queue(server: HopperProcess) -> str:
    created = httpx.post(server.url, data={"Action": "CreateQueue", "QueueName": QUEUE})
    assert created.status_code == 200, created.text
    return f"{server.url}/000000000000/{QUEUE}"


def _receive(queue: str, wait: int) -> httpx.Response:
    return httpx.post(queue, data={"Action": "ReceiveMessage", "WaitTimeSeconds": str(wait)},
                      timeout=60)


def _wait_for_output(server: HopperProcess, line: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while line not in server.output():
        if time.monotonic() > deadline:
            pytest.fail(f"the server never logged {line!r}:\n{server.output()}")
        time.sleep(0.05)  # the log is a file: look again shortly


def test_a_long_poll_started_during_an_outage_answers_503_when_its_time_is_up(
    cluster, server
):
    # given a queue in use (its record just read, as under load) whose database then
    # crashes
    queue = _queue(server)
    assert _receive(queue, 0).status_code == 200
    cluster.stop()

    # when a long poll of one second starts
    started = time.monotonic()
    answer = _receive(queue, 1)

    # then it waits out its second and answers ServiceUnavailable, not InternalFailure
    assert answer.status_code == 503, answer.text
    assert "ServiceUnavailable" in answer.text
    assert time.monotonic() - started >= 0.9


def test_a_long_poll_started_during_an_outage_receives_what_is_sent_once_it_ends(
    cluster, server
):
    # given a long poll that starts while the database is down, and must read its
    # queue's record then
    queue = _queue(server)
    cluster.stop()
    answers: list[httpx.Response] = []
    poll = threading.Thread(target=lambda: answers.append(_receive(queue, 20)))
    poll.start()
    _wait_for_output(server, RETRY_LINE)

    # when the database comes back and a message is sent
    cluster.start()
    for _ in range(100):
        sent = httpx.post(queue, data={"Action": "SendMessage", "MessageBody": "after"})
        if sent.status_code == 200:
            break
        time.sleep(0.1)  # the store is still reconnecting: send again
    assert sent.status_code == 200, sent.text

    # then the poll answers 200 with it
    poll.join()
    [answer] = answers
    assert answer.status_code == 200, answer.text
    assert "<Body>after</Body>" in answer.text
