"""The console and Hopper.Dispatch on a live server: a queue shows its retry policy and
dispatch target, its dispatch pauses and resumes, and the message browser shows a dead
message's Hopper.LastError."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest

from .consoles import Server, console_server, unique
from .handlers import running_function
from .test_dispatch import counts

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", params=["memory", "postgres"])
def server(request: pytest.FixtureRequest) -> Iterator[Server]:
    with console_server(request.param, False) as server:
        yield server


def until(check, within: float = 10.0) -> None:
    deadline = time.monotonic() + within
    while not check():
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_a_paused_dispatch_holds_its_messages_until_resumed(server: Server) -> None:
    sqs = server.sqs()
    with running_function() as function, server.api() as api:
        name = unique("dispatched")
        target = {"url": function.url, "paused": True}
        url = sqs.create_queue(
            QueueName=name,
            Attributes={
                "Hopper.Dispatch": json.dumps(target),
                "Hopper.RetryPolicy": '{"baseDelaySeconds": 2, "jitter": "equal"}',
            },
        )["QueueUrl"]
        path = f"/queues/{server.account()}/{name}"
        queue = api.get(path).json()["queue"]
        assert queue["retry_policy"] == {"base": 2, "maximum": 900, "jitter": "equal"}
        assert queue["dispatch"]["url"] == function.url and queue["dispatch"]["paused"]
        message_id = sqs.send_message(QueueUrl=url, MessageBody="ok")["MessageId"]
        time.sleep(1.5)  # more than a dispatchers' look at the queues: nothing was taken
        assert counts(sqs, url) == (1, 0, 0)
        assert api.post(f"{path}/dispatch/resume").json()["dispatch"]["paused"] is False
        until(lambda: function.done(message_id) == 1)
        assert api.post(f"{path}/dispatch/pause").json()["dispatch"]["paused"] is True
        assert api.get(path).json()["queue"]["dispatch"]["paused"] is True


def test_the_message_browser_shows_why_a_dead_message_failed(server: Server) -> None:
    sqs = server.sqs()
    with running_function() as function, server.api() as api:
        dead_name = unique("dead")
        dlq = sqs.create_queue(QueueName=dead_name)["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])[
            "Attributes"
        ]["QueueArn"]
        url = sqs.create_queue(
            QueueName=unique("failing"),
            Attributes={
                "Hopper.Dispatch": json.dumps({"url": function.url}),
                "RedrivePolicy": json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 1}),
            },
        )["QueueUrl"]
        sqs.send_message(QueueUrl=url, MessageBody="fail-now")
        until(lambda: counts(sqs, url) == (0, 0, 0) and counts(sqs, dlq)[0] == 1)
        [message] = api.get(f"/queues/{server.account()}/{dead_name}/messages").json()[
            "messages"
        ]
        assert message["last_error"].startswith("HTTP 200: ")
        assert "batchItemFailures" in message["last_error"]
