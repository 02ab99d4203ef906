"""A generated corpus of malformed SNS requests, and what a well-formed SNS answer is.

Every SNS action starts from a valid query request (its form fields as botocore writes
them); each case replaces one field's value with one hostile value (bad_input.HOSTILE's
query texts), or drops one field, and a few hand-made cases add what a swap cannot
express (huge list indices, deep filter policies, forged ARNs, a form that is not
UTF-8). Every case carries an SNS credential scope with authentication off (routing by
scope, unsigned), so AddPermission and RemovePermission reach SNS, not SQS.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from xml.etree import ElementTree

from .bad_input import FORM_TYPE, HOSTILE, Case, form

NAMESPACE = "{http://sns.amazonaws.com/doc/2010-03-31/}"
SCOPE = ("AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/sns/aws4_request, "
         "SignedHeaders=host, Signature=00")
Fields = list[tuple[str, str]]


@dataclass(frozen=True)
class SnsWorld:
    topic: str
    fifo_topic: str
    queue_arn: str
    subscription: str


def sns_case(name: str, action: str, fields: Fields) -> Case:
    headers = {"Content-Type": FORM_TYPE, "Authorization": SCOPE}
    return Case(name, "sns", "POST", "/", form(fields), headers, action)


def valid_requests(world: SnsWorld) -> dict[str, Fields]:
    topic, sub = world.topic, world.subscription
    attribute = [("MessageAttributes.entry.1.Name", "color"),
                 ("MessageAttributes.entry.1.Value.DataType", "String"),
                 ("MessageAttributes.entry.1.Value.StringValue", "red")]
    return {
        "CreateTopic": [("Name", "corpus-made"), ("Attributes.entry.1.key", "DisplayName"),
                        ("Attributes.entry.1.value", "d"), ("Tags.member.1.Key", "k"),
                        ("Tags.member.1.Value", "v")],
        "DeleteTopic": [("TopicArn", topic + "-other")],
        "ListTopics": [("NextToken", topic)],
        "GetTopicAttributes": [("TopicArn", topic)],
        "SetTopicAttributes": [("TopicArn", topic), ("AttributeName", "DeliveryPolicy"),
                               ("AttributeValue", json.dumps({"healthyRetryPolicy":
                                                              {"numRetries": 2}}))],
        "AddPermission": [("TopicArn", topic), ("Label", "l"),
                          ("AWSAccountId.member.1", "111122223333"),
                          ("ActionName.member.1", "Publish")],
        "RemovePermission": [("TopicArn", topic), ("Label", "l")],
        "TagResource": [("ResourceArn", topic), ("Tags.member.1.Key", "k"),
                        ("Tags.member.1.Value", "v")],
        "UntagResource": [("ResourceArn", topic), ("TagKeys.member.1", "k")],
        "ListTagsForResource": [("ResourceArn", topic)],
        "Subscribe": [("TopicArn", topic), ("Protocol", "sqs"), ("Endpoint", world.queue_arn),
                      ("Attributes.entry.1.key", "FilterPolicy"),
                      ("Attributes.entry.1.value", json.dumps({"color": ["red"]})),
                      ("ReturnSubscriptionArn", "true")],
        "ConfirmSubscription": [("TopicArn", topic), ("Token", "0" * 128)],
        "Unsubscribe": [("SubscriptionArn", topic + ":00000000-0000-0000-0000-000000000000")],
        "ListSubscriptions": [("NextToken", sub)],
        "ListSubscriptionsByTopic": [("TopicArn", topic), ("NextToken", sub)],
        "GetSubscriptionAttributes": [("SubscriptionArn", sub)],
        "SetSubscriptionAttributes": [("SubscriptionArn", sub),
                                      ("AttributeName", "FilterPolicy"),
                                      ("AttributeValue", json.dumps({"color": ["red"]}))],
        "Publish": [("TopicArn", topic), ("Message", "m"), ("Subject", "s"), *attribute],
        "PublishBatch": [("TopicArn", world.fifo_topic),
                         ("PublishBatchRequestEntries.member.1.Id", "a"),
                         ("PublishBatchRequestEntries.member.1.Message", "m"),
                         ("PublishBatchRequestEntries.member.1.MessageGroupId", "g"),
                         ("PublishBatchRequestEntries.member.1.MessageDeduplicationId", "d")],
    }


def corpus(world: SnsWorld) -> list[Case]:
    cases = []
    for action, fields in valid_requests(world).items():
        everything = [("Action", action), ("Version", "2010-03-31"), *fields]
        cases.append(sns_case(f"{action}/valid", action, everything))
        for n, (name, _) in enumerate(everything):
            dropped = everything[:n] + everything[n + 1:]
            cases.append(sns_case(f"{action}/{name}/dropped", action, dropped))
            for hostile in HOSTILE:
                if hostile.query_text is None:
                    continue
                swapped = [*everything[:n], (name, hostile.query_text), *everything[n + 1:]]
                cases.append(sns_case(f"{action}/{name}/{hostile.label}", action, swapped))
    return cases + hand_made(world)


def hand_made(world: SnsWorld) -> list[Case]:
    deep = json.dumps({"a": [1]})
    for _ in range(200):
        deep = '{"a": ' + deep + "}"
    publish = [("Action", "Publish"), ("TopicArn", world.topic), ("Message", "m")]
    return [
        sns_case("huge-index", "Publish",
                 [*publish, ("MessageAttributes.entry.999999999999.Name", "x")]),
        sns_case("deep-filter-policy", "Subscribe",
                 [("Action", "Subscribe"), ("TopicArn", world.topic), ("Protocol", "sqs"),
                  ("Endpoint", world.queue_arn), ("Attributes.entry.1.key", "FilterPolicy"),
                  ("Attributes.entry.1.value", deep),
                  ("Attributes.entry.2.key", "FilterPolicyScope"),
                  ("Attributes.entry.2.value", "MessageBody")]),
        sns_case("binary-not-base64", "Publish",
                 [*publish, ("MessageAttributes.entry.1.Name", "b"),
                  ("MessageAttributes.entry.1.Value.DataType", "Binary"),
                  ("MessageAttributes.entry.1.Value.BinaryValue", "%%%")]),
        sns_case("forged-arn", "GetTopicAttributes",
                 [("Action", "GetTopicAttributes"), ("TopicArn", "arn:aws:sns:::")]),
        sns_case("other-service-arn", "Publish",
                 [("Action", "Publish"), ("TopicArn", world.queue_arn), ("Message", "m")]),
        sns_case("no-action", "", [("TopicArn", world.topic)]),
        sns_case("unknown-action", "Nope", [("Action", "Nope")]),
        sns_case("sqs-action-on-sns", "SendMessage", [("Action", "SendMessage")]),
        Case("not-utf8", "sns", "POST", "/", b"Action=Publish&Message=%ff%fe",
             {"Content-Type": FORM_TYPE, "Authorization": SCOPE}, "Publish"),
    ]


def malformation(case: Case, status: int, content_type: str, body: bytes) -> str | None:
    """What is wrong with an answer to `case`, or None when it is a well-formed SNS
    answer (never a 5xx)."""
    if status >= 500:
        return f"status {status}"
    if content_type != "text/xml":
        return f"content type {content_type!r}"
    try:
        root = ElementTree.fromstring(body)
    except ElementTree.ParseError as error:
        return f"XML that does not parse ({error})"
    if status >= 400:
        return _error_malformation(root)
    if root.tag != f"{NAMESPACE}{case.action}Response":
        return f"an answer rooted at {root.tag}"
    return None


def _error_malformation(root: ElementTree.Element) -> str | None:
    if root.tag != f"{NAMESPACE}ErrorResponse":
        return f"an error rooted at {root.tag}"
    for part in ("Type", "Code", "Message"):
        if root.find(f"{NAMESPACE}Error/{NAMESPACE}{part}") is None:
            return f"an error without {part}"
    if root.find(f"{NAMESPACE}RequestId") is None:
        return "an error without RequestId"
    return None


__all__ = ["Mapping", "SnsWorld", "corpus", "malformation"]
