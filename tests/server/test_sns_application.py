"""The issue's done-when: an application using boto3's SNS and SQS clients together --
a topic, two queues with different filter policies (one raw, one enveloped), a FIFO
topic to a FIFO queue, an HTTP subscriber on loopback -- runs unmodified against a
live hopper on each store."""

from __future__ import annotations

import json
import urllib.request

import pytest

from .http_subscribers import subscriber
from .sns_clients import queue_with_arn, receive_all, sns_client, sqs_in, unique

pytestmark = pytest.mark.slow


def test_an_sns_and_sqs_application_runs_unmodified(endpoint: str) -> None:
    sns, sqs = sns_client(endpoint), sqs_in(endpoint)
    orders = sns.create_topic(Name=unique("orders"))["TopicArn"]
    big_url, big_arn = queue_with_arn(sqs, unique("big-orders"))
    eu_url, eu_arn = queue_with_arn(sqs, unique("eu-orders"))
    sns.subscribe(TopicArn=orders, Protocol="sqs", Endpoint=big_arn, Attributes={
        "FilterPolicy": json.dumps({"total": [{"numeric": [">=", 100]}]}),
        "RawMessageDelivery": "true"})
    sns.subscribe(TopicArn=orders, Protocol="sqs", Endpoint=eu_arn, Attributes={
        "FilterPolicy": json.dumps({"region": [{"prefix": "eu-"}]})})
    ledger = sns.create_topic(Name=unique("ledger") + ".fifo", Attributes={
        "FifoTopic": "true", "ContentBasedDeduplication": "true"})["TopicArn"]
    ledger_url, ledger_arn = queue_with_arn(sqs, unique("ledger") + ".fifo",
                                            FifoQueue="true")
    sns.subscribe(TopicArn=ledger, Protocol="sqs", Endpoint=ledger_arn)

    with subscriber() as web:
        sns.subscribe(TopicArn=orders, Protocol="http",
                      Endpoint=web.url + "/orders")
        urllib.request.urlopen(json.loads(web.next().body)["SubscribeURL"]).read()
        for n, (total, region) in enumerate([(50, "eu-west-1"), (150, "us-east-1"),
                                             (250, "eu-central-1")]):
            sns.publish(TopicArn=orders, Message=json.dumps({"order": n}), MessageAttributes={
                "total": {"DataType": "Number", "StringValue": str(total)},
                "region": {"DataType": "String", "StringValue": region}})
            sns.publish(TopicArn=ledger, Message=f"entry {n}", MessageGroupId="book")
        web_orders = sorted(json.loads(json.loads(web.next().body)["Message"])["order"]
                            for _ in range(3))

    big = [json.loads(m["Body"])["order"] for m in receive_all(sqs, big_url, 2)]
    eu = [json.loads(json.loads(m["Body"])["Message"])["order"]
          for m in receive_all(sqs, eu_url, 2)]
    entries = [json.loads(m["Body"])["Message"] for m in receive_all(sqs, ledger_url, 3)]
    assert sorted(big) == [1, 2]
    assert sorted(eu) == [0, 2]
    assert entries == ["entry 0", "entry 1", "entry 2"]
    assert web_orders == [0, 1, 2]
