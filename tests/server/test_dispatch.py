"""Hopper.Dispatch end to end on every store: a Lambda-style function on loopback that
fails some items through batchItemFailures and times out on others, behind queues with
a retry policy and a dead-letter queue. Each success is deleted once, each failure is
retried with spread delays, poison messages reach the dead-letter queue with
Hopper.LastError."""

from __future__ import annotations

import json
import time
import uuid

import httpx
import pytest

from .handlers import Function, running_function

pytestmark = pytest.mark.slow

RETRIES = json.dumps({"baseDelaySeconds": 1, "maxDelaySeconds": 4, "jitter": "full"})


def unique(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


def dispatched_queue(sqs, function: Function, max_receives: int, **target) -> tuple[str, str]:
    """A queue dispatching to `function`, with RETRIES and a dead-letter queue after
    `max_receives`; (its URL, the dead-letter queue's URL)."""
    dlq = sqs.create_queue(QueueName=unique("dead"))["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    redrive = json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": max_receives})
    dispatch = json.dumps({"url": function.url, **target})  # `url` in target wins
    url = sqs.create_queue(
        QueueName=unique("work"),
        Attributes={
            "RedrivePolicy": redrive, "Hopper.RetryPolicy": RETRIES, "Hopper.Dispatch": dispatch
        },
    )["QueueUrl"]
    return url, dlq


def send(sqs, url: str, bodies: list[str]) -> dict[str, str]:
    """Send `bodies`; their message ids -> bodies."""
    ids = {}
    for start in range(0, len(bodies), 10):
        entries = [{"Id": str(i), "MessageBody": b} for i, b in enumerate(bodies[start:start + 10])]
        answer = sqs.send_message_batch(QueueUrl=url, Entries=entries)
        for entry in answer["Successful"]:
            ids[entry["MessageId"]] = entries[int(entry["Id"])]["MessageBody"]
    return ids


def counts(sqs, url: str) -> tuple[int, int, int]:
    names = [
        "ApproximateNumberOfMessages",
        "ApproximateNumberOfMessagesNotVisible",
        "ApproximateNumberOfMessagesDelayed",
    ]
    found = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"]
    return tuple(int(found[name]) for name in names)  # type: ignore[return-value]


def drained(sqs, url: str, dlq: str, dead: int, within: float = 60.0) -> None:
    """Wait until the queue is empty and its dead-letter queue holds `dead` messages."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if counts(sqs, url) == (0, 0, 0) and counts(sqs, dlq)[0] == dead:
            return
        time.sleep(0.1)
    pytest.fail(f"not drained: {counts(sqs, url)}, dead {counts(sqs, dlq)}")


def dead_letters(sqs, dlq: str) -> dict[str, dict]:
    found = {}
    while True:
        messages = sqs.receive_message(
            QueueUrl=dlq, MaxNumberOfMessages=10, MessageSystemAttributeNames=["Hopper.LastError"]
        ).get("Messages", [])
        if not messages:
            return found
        found.update({m["MessageId"]: m for m in messages})


def test_successes_are_deleted_once_and_failures_retried_then_dead_lettered(sqs):
    with running_function() as function:
        url, dlq = dispatched_queue(sqs, function, 3, batchSize=10, maxConcurrency=2)
        bodies = [f"ok-{i}" for i in range(20)] + [f"flaky-{i}" for i in range(5)]
        sent = send(sqs, url, bodies + [f"fail-{i}" for i in range(8)])
        drained(sqs, url, dlq, dead=8)
        assert function.most_in_flight <= 2
        for message_id, body in sent.items():
            if body.startswith(("ok", "flaky")):
                assert function.done(message_id) == 1, body
        dead = dead_letters(sqs, dlq)
        assert {sent[message_id] for message_id in dead} == {f"fail-{i}" for i in range(8)}
        for message in dead.values():
            error = message["Attributes"]["Hopper.LastError"]
            assert error.startswith("HTTP 200: ") and message["MessageId"] in error
        # the retries were spread, not synchronized: the first retry of each poison
        # message came 0 to 1 s (the first backoff's ceiling) after its first attempt,
        # plus the time a worker takes to call again (loose: the machine is shared)
        gaps = [function.times(m)[1] - function.times(m)[0] for m in dead]
        assert all(len(function.times(m)) == 3 for m in dead)
        assert max(gaps) - min(gaps) > 0.1, gaps
        assert max(gaps) < 1.0 + 1.5, gaps
        # and the metrics counted the calls and the retries
        scraped = metrics(sqs, url)
        assert scraped["hopper_dispatch_calls_total", "partial"] >= 3
        assert scraped["hopper_retries_scheduled_total", ""] == 5 + 8 * 3
        # a deleted queue's dispatch series end with it
        sqs.delete_queue(QueueUrl=url)
        assert metrics(sqs, url) == {}


def metrics(sqs, url: str) -> dict[tuple[str, str], float]:
    """The dispatch counters of the queue at `url`, by (name, outcome)."""
    name = url.rsplit("/", 1)[1]
    base = url.rsplit("/", 2)[0]
    values: dict[tuple[str, str], float] = {}
    for line in httpx.get(f"{base}/metrics").text.splitlines():
        if line.startswith("hopper_") and f'queue="{name}"' in line:
            metric, _, value = line.rpartition(" ")
            outcome = metric.partition('outcome="')[2].partition('"')[0]
            values[metric.partition("{")[0], outcome] = float(value)
    return values


def test_a_call_that_times_out_fails_its_batch_into_the_dead_letter_queue(sqs):
    with running_function(slow_seconds=2.0) as function:
        url, dlq = dispatched_queue(sqs, function, 2, batchSize=1, timeoutSeconds=1)
        sent = send(sqs, url, ["slow-0", "ok-0", "ok-1"])
        drained(sqs, url, dlq, dead=1)
        [(message_id, message)] = dead_letters(sqs, dlq).items()
        assert sent[message_id] == "slow-0"
        assert message["Attributes"]["Hopper.LastError"] == "timeout: no answer within 1 s"
        assert [function.done(m) for m, body in sent.items() if body.startswith("ok")] == [1, 1]


def test_hopper_last_error_is_never_returned_for_all(sqs):
    with running_function() as function:
        url, dlq = dispatched_queue(sqs, function, 1)
        send(sqs, url, ["fail-0"])
        drained(sqs, url, dlq, dead=1)
        [message] = sqs.receive_message(QueueUrl=dlq, MessageSystemAttributeNames=["All"])[
            "Messages"
        ]
        assert "Hopper.LastError" not in message["Attributes"]


def test_a_raw_target_gets_one_message_per_call_and_its_error_is_kept(sqs):
    with running_function() as function:
        url, dlq = dispatched_queue(sqs, function, 2, url=function.raw_url, payload="raw")
        ok = sqs.send_message(
            QueueUrl=url, MessageBody="ok raw ✓",
            MessageAttributes={"colour": {"DataType": "String", "StringValue": "blue"}},
        )["MessageId"]
        sqs.send_message(QueueUrl=url, MessageBody="fail raw")
        drained(sqs, url, dlq, dead=1)
        assert function.done(ok) == 1
        headers = function.raw_headers[ok]
        assert headers["x-hopper-attribute-colour"] == "blue"
        assert headers["x-hopper-receive-count"] == "1"
        [dead] = dead_letters(sqs, dlq).values()
        assert dead["Body"] == "fail raw"
        assert dead["Attributes"]["Hopper.LastError"] == "HTTP 500: boom"


def test_a_fifo_queue_is_dispatched_in_order_per_group_through_failures(sqs):
    with running_function() as function:
        url = sqs.create_queue(
            QueueName=unique("ordered") + ".fifo",
            Attributes={
                "FifoQueue": "true", "ContentBasedDeduplication": "true",
                "Hopper.RetryPolicy": RETRIES,
                "Hopper.Dispatch": json.dumps(
                    {"url": function.url, "batchSize": 10, "maxConcurrency": 2}
                ),
            },
        )["QueueUrl"]
        sent: dict[str, list[str]] = {}
        for group in ("a", "b", "c"):
            for i in range(8):
                # the third message of each group fails its first attempt
                body = f"{'flaky' if i == 2 else 'ok'}-{group}-{i}"
                answer = sqs.send_message(QueueUrl=url, MessageBody=body, MessageGroupId=group)
                sent.setdefault(group, []).append(answer["MessageId"])
        deadline = time.monotonic() + 30
        while counts(sqs, url) != (0, 0, 0):
            assert time.monotonic() < deadline, counts(sqs, url)
            time.sleep(0.1)
        for ids in sent.values():
            # the last successful call of each message, in the group's send order
            finished = [max(at for at, outcome in function.attempts[m] if outcome == "done")
                        for m in ids]
            assert finished == sorted(finished)


def test_a_batching_window_gathers_messages_sent_apart_into_one_call(sqs):
    with running_function() as function:
        url, _ = dispatched_queue(sqs, function, 3, batchSize=10, batchWindowSeconds=2)
        ids = [sqs.send_message(QueueUrl=url, MessageBody=f"ok-{i}")["MessageId"] for i in range(5)]
        deadline = time.monotonic() + 10
        while not all(function.done(message_id) for message_id in ids):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert function.batches == [5]
