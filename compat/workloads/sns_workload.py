"""The SNS steps of the compat workload, against `sns(Action, **params)` and SQS's
`call`: a topic fanned out to two queues, one raw with a filter policy, one with SNS's
envelope; a publish each queue must (or must not) get; the topic deleted."""

from __future__ import annotations

import json
from typing import Any

from sqs_workload import Call, _arn, _receive_all
from steps import expect, step


def run(sns: Call, call: Call, prefix: str) -> None:
    with step("sns_fan_out"):
        topic = sns("CreateTopic", Name=f"{prefix}-events")["TopicArn"]
        raw = call("CreateQueue", QueueName=f"{prefix}-raw")["QueueUrl"]
        enveloped = call("CreateQueue", QueueName=f"{prefix}-enveloped")["QueueUrl"]
        sns("Subscribe", TopicArn=topic, Protocol="sqs", Endpoint=_arn(call, raw), Attributes={
            "RawMessageDelivery": "true", "FilterPolicy": json.dumps({"kind": ["order"]})})
        sns("Subscribe", TopicArn=topic, Protocol="sqs", Endpoint=_arn(call, enveloped))
        for kind in ("order", "refund"):
            sns("Publish", TopicArn=topic, Message=f"a {kind}", Subject="compat",
                MessageAttributes={"kind": {"DataType": "String", "StringValue": kind}})
        _check_raw(call, raw)
        _check_enveloped(call, enveloped, topic)
    with step("sns_delete_topic"):
        listed = sns("ListSubscriptionsByTopic", TopicArn=topic)["Subscriptions"]
        expect(len(listed) == 2, f"subscriptions: {listed}")
        sns("DeleteTopic", TopicArn=topic)
        for url in (raw, enveloped):
            call("DeleteQueue", QueueUrl=url)


def _check_raw(call: Call, url: str) -> None:
    [message] = _receive_all(call, url, 1)
    expect(message["Body"] == "a order", f"raw body {message['Body']!r}")


def _check_enveloped(call: Call, url: str, topic: str) -> None:
    messages = _receive_all(call, url, 2)
    envelopes: list[dict[str, Any]] = [json.loads(m["Body"]) for m in messages]
    expect(sorted(e["Message"] for e in envelopes) == ["a order", "a refund"], "messages")
    for envelope in envelopes:
        expect(envelope["Type"] == "Notification" and envelope["TopicArn"] == topic, "envelope")
        expect(envelope["Subject"] == "compat" and envelope["Signature"], "subject, signature")
