"""GET /metrics on a live server, on every store: per queue gauges read at scrape
time, per queue counters, per action requests by outcome and their latency."""

from __future__ import annotations

import json
import time
import uuid

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

ACCOUNT = "000000000000"


def scrape(endpoint: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of one scrape: (name, labels) -> value."""
    response = httpx.get(f"{endpoint}/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def of_queue(samples: dict, name: str, queue: str) -> float | None:
    return samples.get((name, frozenset({("account", ACCOUNT), ("queue", queue)})))


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def test_queue_gauges_count_visible_in_flight_delayed_and_dead_letters(sqs, endpoint) -> None:
    dlq_name, source_name = unique("gauge-dlq"), unique("gauge-src")
    dlq = sqs.create_queue(QueueName=dlq_name)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]
    policy = {"deadLetterTargetArn": arn["QueueArn"], "maxReceiveCount": "1"}
    source = sqs.create_queue(
        QueueName=source_name, Attributes={"RedrivePolicy": json.dumps(policy)}
    )["QueueUrl"]
    sqs.send_message(QueueUrl=source, MessageBody="poison")
    sqs.send_message(QueueUrl=source, MessageBody="good")
    sqs.send_message(QueueUrl=source, MessageBody="later", DelaySeconds=900)
    sqs.send_message(QueueUrl=source, MessageBody="waiting")
    [first] = sqs.receive_message(QueueUrl=source, VisibilityTimeout=0)["Messages"]
    assert first["Body"] == "poison"
    # The next receive moves "poison" (received once, maxReceiveCount 1) and delivers "good".
    [good] = sqs.receive_message(QueueUrl=source, VisibilityTimeout=300)["Messages"]
    assert good["Body"] == "good"

    samples = scrape(endpoint)
    assert of_queue(samples, "hopper_queue_messages_visible", source_name) == 1
    assert of_queue(samples, "hopper_queue_messages_in_flight", source_name) == 1
    assert of_queue(samples, "hopper_queue_messages_delayed", source_name) == 1
    assert of_queue(samples, "hopper_queue_dead_letter_depth", source_name) == 1
    assert of_queue(samples, "hopper_queue_messages_visible", dlq_name) == 1
    # Only a queue with a RedrivePolicy has a dead-letter depth.
    assert of_queue(samples, "hopper_queue_dead_letter_depth", dlq_name) is None
    age = of_queue(samples, "hopper_queue_oldest_visible_message_age_seconds", source_name)
    assert age is not None and 0 <= age < 60
    assert of_queue(samples, "hopper_messages_sent_total", source_name) == 4
    assert of_queue(samples, "hopper_messages_received_total", source_name) == 2
    assert of_queue(samples, "hopper_messages_dead_lettered_total", source_name) == 1


def test_a_deleted_queue_has_no_series_even_after_dead_letters(sqs, endpoint) -> None:
    # given a queue that moved a message to its dead-letter queue
    dlq_name, source_name = unique("gone-dlq"), unique("gone-src")
    dlq = sqs.create_queue(QueueName=dlq_name)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]
    policy = {"deadLetterTargetArn": arn["QueueArn"], "maxReceiveCount": "1"}
    source = sqs.create_queue(
        QueueName=source_name, Attributes={"RedrivePolicy": json.dumps(policy)}
    )["QueueUrl"]
    sqs.send_message(QueueUrl=source, MessageBody="poison")
    sqs.receive_message(QueueUrl=source, VisibilityTimeout=0)
    sqs.receive_message(QueueUrl=source)  # moves it
    assert of_queue(scrape(endpoint), "hopper_messages_dead_lettered_total", source_name) == 1

    # when the queue is deleted, and receives go on elsewhere (dead letters are
    # tallied after every receive)
    sqs.delete_queue(QueueUrl=source)
    sqs.receive_message(QueueUrl=dlq)

    # then no series names it (issue 25, item 7)
    assert source_name not in httpx.get(f"{endpoint}/metrics").text


def test_counters_count_deletes_and_redeliveries(sqs, endpoint) -> None:
    name = unique("counted")
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    before_send = time.time()
    sqs.send_message_batch(
        QueueUrl=url, Entries=[{"Id": str(i), "MessageBody": f"m{i}"} for i in range(3)]
    )
    released = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=3, VisibilityTimeout=0)
    assert len(released["Messages"]) == 3
    again = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=2, VisibilityTimeout=300)
    sqs.delete_message_batch(
        QueueUrl=url,
        Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]}
                 for i, m in enumerate(again["Messages"])],
    )
    samples = scrape(endpoint)
    assert of_queue(samples, "hopper_messages_sent_total", name) == 3
    assert of_queue(samples, "hopper_messages_received_total", name) == 5
    assert of_queue(samples, "hopper_redeliveries_total", name) == 2
    assert of_queue(samples, "hopper_messages_deleted_total", name) == 2
    assert of_queue(samples, "hopper_queue_messages_visible", name) == 1
    # The oldest visible message was sent during this test: its age is no more than the
    # time since (the server's clock is this machine's; a second's slack for rounding).
    age = of_queue(samples, "hopper_queue_oldest_visible_message_age_seconds", name)
    assert age is not None and 0 <= age <= time.time() - before_send + 1


def test_an_empty_queue_reports_zero_age(sqs, endpoint) -> None:
    name = unique("empty")
    sqs.create_queue(QueueName=name)
    samples = scrape(endpoint)
    assert of_queue(samples, "hopper_queue_messages_visible", name) == 0
    assert of_queue(samples, "hopper_queue_oldest_visible_message_age_seconds", name) == 0


def test_requests_are_counted_by_action_and_outcome_with_their_latency(sqs, endpoint) -> None:
    def requests(samples: dict, action: str, outcome: str) -> float:
        key = frozenset({("action", action), ("outcome", outcome)})
        return samples.get(("hopper_requests_total", key), 0.0)

    def timed(samples: dict, action: str) -> float:
        key = frozenset({("action", action)})
        return samples.get(("hopper_request_duration_seconds_count", key), 0.0)

    before = scrape(endpoint)
    with pytest.raises(sqs.exceptions.QueueDoesNotExist):
        sqs.get_queue_url(QueueName=unique("nowhere"))
    sqs.list_queues()
    after = scrape(endpoint)
    missing = "QueueDoesNotExist"
    assert requests(after, "GetQueueUrl", missing) == requests(before, "GetQueueUrl", missing) + 1
    assert requests(after, "ListQueues", "ok") == requests(before, "ListQueues", "ok") + 1
    assert timed(after, "GetQueueUrl") == timed(before, "GetQueueUrl") + 1
    bucket = frozenset({("action", "ListQueues"), ("le", "+Inf")})
    assert after[("hopper_request_duration_seconds_bucket", bucket)] >= 1


def test_a_request_that_names_no_known_action_is_counted_as_unknown(endpoint) -> None:
    response = httpx.post(
        endpoint, content=b"{}",
        headers={"x-amz-target": "AmazonSQS.NoSuchThing",
                 "content-type": "application/x-amz-json-1.0"},
    )
    assert response.status_code == 400
    samples = scrape(endpoint)
    key = frozenset({("action", "unknown"), ("outcome", "InvalidAction")})
    assert samples.get(("hopper_requests_total", key), 0) >= 1
