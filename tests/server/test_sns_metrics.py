"""/metrics counts SNS per topic: publications, deliveries and failed deliveries."""

from __future__ import annotations

import httpx
import pytest

from hopper.testing import HopperServer

from .sns_clients import queue_with_arn, sns_client, sqs_in

pytestmark = pytest.mark.slow


def value(text: str, line_start: str) -> float:
    [line] = [line for line in text.splitlines() if line.startswith(line_start)]
    return float(line.rsplit(" ", 1)[1])


def test_metrics_count_publishes_deliveries_and_failures_per_topic() -> None:
    with HopperServer() as server:
        sns, sqs = sns_client(server.endpoint_url), sqs_in(server.endpoint_url)
        topic = sns.create_topic(Name="counted")["TopicArn"]
        url, arn = queue_with_arn(sqs, "counted")
        sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=arn)
        sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=arn + "-gone")
        sns.publish(TopicArn=topic, Message="one")
        sns.publish_batch(TopicArn=topic, PublishBatchRequestEntries=[
            {"Id": "a", "Message": "two"}, {"Id": "b", "Message": "three"}])
        text = httpx.get(server.endpoint_url + "/metrics").text
    label = f'topic="{topic}"'
    assert value(text, f"hopper_sns_messages_published_total{{{label}}}") == 3
    assert value(text, f'hopper_sns_deliveries_total{{protocol="sqs",{label}}}') == 3
    assert value(text, f'hopper_sns_deliveries_failed_total{{protocol="sqs",{label}}}') == 3
