"""Hopper.RetryPolicy and Hopper.Dispatch through a live server, on both protocols and
every store: set and read by name or with Hopper.All (never with All), refused as SQS
refuses a bad RedrivePolicy; and a lease that runs out hides its message for the
backoff."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator

import pytest

from .protocols import Caller

pytestmark = pytest.mark.slow

POLICY = "Hopper.RetryPolicy"
DISPATCH = "Hopper.Dispatch"


@pytest.fixture(params=["json", "query"])
def caller(request: pytest.FixtureRequest, endpoint: str) -> Iterator[Caller]:
    client = Caller(request.param, endpoint)
    yield client
    client.close()


def new_queue(caller: Caller, **attributes: str) -> str:
    name = f"retry-{uuid.uuid4().hex[:8]}"
    answer = caller("CreateQueue", QueueName=name, Attributes=attributes)
    assert answer.status == 200, answer
    return str(answer.value("QueueUrl"))


def attributes(caller: Caller, url: str, *names: str) -> dict[str, str]:
    return caller("GetQueueAttributes", QueueUrl=url, AttributeNames=list(names)).attributes()


def test_retry_policy_is_read_by_name_and_with_hopper_all_never_with_all(caller):
    text = '{"baseDelaySeconds": 2, "maxDelaySeconds": 60.5}'
    url = new_queue(caller, **{POLICY: text})
    shown = {"baseDelaySeconds": 2, "maxDelaySeconds": 60.5, "jitter": "full"}
    assert json.loads(attributes(caller, url, POLICY)[POLICY]) == shown
    assert json.loads(attributes(caller, url, "Hopper.All")[POLICY]) == shown
    assert POLICY not in attributes(caller, url, "All")
    changed = caller("SetQueueAttributes", QueueUrl=url, Attributes={POLICY: ""})
    assert changed.status == 200
    assert POLICY not in attributes(caller, url, POLICY)


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        "[1]",
        '{"maxDelaySeconds": 5}',
        '{"baseDelaySeconds": 0}',
        '{"baseDelaySeconds": "soon"}',
        '{"baseDelaySeconds": 10, "maxDelaySeconds": 5}',
        '{"baseDelaySeconds": 1, "maxDelaySeconds": 43201}',
        '{"baseDelaySeconds": 1, "jitter": "some"}',
        '{"baseDelaySeconds": 1, "retries": 3}',
    ],
)
def test_a_bad_retry_policy_is_an_invalid_parameter_value(caller, text):
    name = f"bad-{uuid.uuid4().hex[:8]}"
    answer = caller("CreateQueue", QueueName=name, Attributes={POLICY: text})
    assert (answer.status, answer.code) == (400, "InvalidParameterValue")
    assert answer.message.startswith(f"Value {text} for parameter {POLICY} is invalid. Reason: ")
    url = new_queue(caller)
    answer = caller("SetQueueAttributes", QueueUrl=url, Attributes={POLICY: text})
    assert (answer.status, answer.code) == (400, "InvalidParameterValue")


def test_a_lease_that_runs_out_comes_back_after_its_backoff_counted_as_delayed(caller):
    url = new_queue(caller, **{POLICY: '{"baseDelaySeconds": 2, "jitter": "none"}'})
    caller("SendMessage", QueueUrl=url, MessageBody="flaky")
    # (taken before the receive: the lease starts after it, whatever the answer's delay)
    leased_at = time.monotonic()
    [first] = caller("ReceiveMessage", QueueUrl=url, VisibilityTimeout=1).messages()
    # the lease ends after 1 s; the message is then delayed, not visible, for 2 s more
    deadline = leased_at + 2.5
    while time.monotonic() < deadline:
        counts = attributes(caller, url, "ApproximateNumberOfMessagesDelayed")
        if counts["ApproximateNumberOfMessagesDelayed"] == "1":
            break
    assert counts == {"ApproximateNumberOfMessagesDelayed": "1"}
    [second] = caller("ReceiveMessage", QueueUrl=url, WaitTimeSeconds=10).messages()
    assert time.monotonic() - leased_at >= 3.0
    assert second["MessageId"] == first["MessageId"]


@pytest.mark.parametrize(
    "text",
    [
        "{}",
        '{"url": "ftp://127.0.0.1/"}',
        '{"url": "http://127.0.0.1/", "batchSize": 11}',
        '{"url": "http://127.0.0.1/", "batchSize": 2.5}',
        '{"url": "http://127.0.0.1/", "maxConcurrency": 0}',
        '{"url": "http://127.0.0.1/", "timeoutSeconds": 901}',
        '{"url": "http://127.0.0.1/", "batchWindowSeconds": -1}',
        '{"url": "http://127.0.0.1/", "payload": "xml"}',
        '{"url": "http://127.0.0.1/", "paused": "yes"}',
        '{"url": "http://127.0.0.1/", "method": "PUT"}',
    ],
)
def test_a_bad_dispatch_target_is_an_invalid_parameter_value(caller, text):
    url = new_queue(caller)
    answer = caller("SetQueueAttributes", QueueUrl=url, Attributes={DISPATCH: text})
    assert (answer.status, answer.code) == (400, "InvalidParameterValue")
    assert answer.message.startswith(f"Value {text} for parameter {DISPATCH} is invalid. Reason: ")


def test_a_dispatch_target_is_read_by_name_and_with_hopper_all_never_with_all(caller):
    text = '{"url": "http://127.0.0.1:1/", "paused": true, "timeoutSeconds": 2.5}'
    url = new_queue(caller, **{DISPATCH: text})
    shown = json.loads(attributes(caller, url, DISPATCH)[DISPATCH])
    assert shown == {
        "url": "http://127.0.0.1:1/", "batchSize": 10, "batchWindowSeconds": 0,
        "maxConcurrency": 2, "timeoutSeconds": 2.5, "payload": "lambda", "paused": True,
    }
    assert DISPATCH in attributes(caller, url, "Hopper.All")
    assert DISPATCH not in attributes(caller, url, "All")
