"""The console's SNS API: topics listed with their subscriptions, and a publish."""

from __future__ import annotations

import httpx
import pytest

from hopper.console.answers import CONSOLE_HEADER
from hopper.testing import HopperServer

from .sns_clients import queue_with_arn, receive_all, sns_client, sqs_in

pytestmark = pytest.mark.slow


def test_the_console_lists_topics_with_subscriptions_and_publishes() -> None:
    with HopperServer() as server:
        sns, sqs = sns_client(server.endpoint_url), sqs_in(server.endpoint_url)
        topic = sns.create_topic(Name="shown")["TopicArn"]
        url, arn = queue_with_arn(sqs, "shown")
        sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=arn,
                      Attributes={"RawMessageDelivery": "true"})
        api = server.endpoint_url + "/dashboard/api/topics"
        [listed] = httpx.get(api).json()["topics"]
        # Console actions carry the console's header (console/answers.py).
        headers = {CONSOLE_HEADER: "1"}
        answer = httpx.post(api + "/publish", json={"topic_arn": topic, "message": "hi"},
                            headers=headers)
        missing = httpx.post(api + "/publish", json={"topic_arn": topic + "x", "message": "m"},
                             headers=headers)
        empty = httpx.post(api + "/publish", json={"topic_arn": topic, "message": ""},
                           headers=headers)
        [received] = receive_all(sqs, url, 1)
    assert (listed["arn"], listed["name"], listed["fifo"]) == (topic, "shown", False)
    assert listed["subscriptions"] == [{
        "arn": listed["subscriptions"][0]["arn"], "protocol": "sqs", "endpoint": arn,
        "confirmed": True, "raw": True, "filter_policy": None}]
    assert answer.status_code == 200 and answer.json()["message_id"]
    assert received["Body"] == "hi"
    assert (missing.status_code, missing.json()["code"]) == (404, "NotFound")
    assert (empty.status_code, empty.json()["code"]) == (400, "InvalidParameter")
