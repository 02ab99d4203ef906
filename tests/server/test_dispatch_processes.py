"""Hopper.Dispatch with several hopper processes over one store: a process killed
mid-dispatch loses nothing (its leases end, another process delivers; PostgreSQL and
JetStream), and a queue's calls in flight stay within its maxConcurrency across
processes (PostgreSQL and JetStream)."""

from __future__ import annotations

import json
import signal
import time
import uuid
from pathlib import Path

import pytest

from .conftest import sqs_client, store_options
from .handlers import running_function
from .processes import start_hopper
from .test_dispatch import counts, send

pytestmark = pytest.mark.slow


def dispatched_queue(sqs, url: str, **target) -> str:
    return sqs.create_queue(
        QueueName=f"work-{uuid.uuid4().hex[:8]}",
        Attributes={
            "Hopper.RetryPolicy": json.dumps({"baseDelaySeconds": 1, "maxDelaySeconds": 2}),
            "Hopper.Dispatch": json.dumps({"url": url, **target}),
        },
    )["QueueUrl"]


def wait_empty(sqs, url: str, within: float) -> None:
    deadline = time.monotonic() + within
    while counts(sqs, url) != (0, 0, 0):
        assert time.monotonic() < deadline, counts(sqs, url)
        time.sleep(0.2)


# JetStream: the current store (its native rewrite, issue 26, must pass this too).
@pytest.mark.parametrize("store", ["postgres", "jetstream"])
def test_nothing_is_lost_when_the_dispatching_process_is_killed(tmp_path: Path, store: str):
    with store_options(store) as options, running_function() as function:
        first = start_hopper(*options, "--relaxed-timing", log=tmp_path / "first.log")
        sqs = sqs_client(first.url)
        url = dispatched_queue(sqs, function.url, batchSize=5, timeoutSeconds=2)
        sent = send(sqs, url, [f"hold-{i}" for i in range(20)])
        # given a call in flight, the function holding it
        assert function.called.wait(10)
        # when the process is killed, and another takes its place
        first.stop(signal.SIGKILL)
        function.release.set()
        second = start_hopper(*options, "--relaxed-timing", log=tmp_path / "second.log")
        try:
            survivor = sqs_client(second.url)
            # then every message is delivered and deleted all the same
            wait_empty(survivor, url.replace(first.url, second.url), within=60)
            assert all(function.done(message_id) >= 1 for message_id in sent)
        finally:
            second.stop()


@pytest.mark.parametrize("store", ["postgres", "jetstream"])
def test_calls_in_flight_stay_within_max_concurrency_across_processes(
    tmp_path: Path, store: str
) -> None:
    with store_options(store) as options, running_function() as function:
        servers = [
            start_hopper(*options, "--relaxed-timing", log=tmp_path / f"{n}.log")
            for n in range(2)
        ]
        try:
            sqs = sqs_client(servers[0].url)
            url = dispatched_queue(sqs, function.url, batchSize=1, maxConcurrency=2)
            sent = send(sqs, url, [f"nap-{i}" for i in range(30)])
            wait_empty(sqs, url, within=60)
            assert all(function.done(message_id) == 1 for message_id in sent)
            assert function.most_in_flight == 2
        finally:
            for server in servers:
                server.stop()
