"""SNS on the same endpoint: topics, attributes, tags, subscriptions of queues, publish
and its refusals, batches and FIFO topics, as boto3's SNS client sees them."""

from __future__ import annotations

import json

from conformance.registry import scenario
from conformance.target import Target


def _topic(t: Target, suffix: str = "t", **attributes: str) -> str:
    name = t.queue_name(suffix)[:200]
    answer = t.sns("CreateTopic", Name=name, Attributes=attributes)
    return str(answer["response"]["TopicArn"])


def _queue_arn(t: Target, suffix: str = "q", **attributes: str) -> tuple[str, str]:
    url = t.create_queue(suffix, record=False, **attributes)
    arn = t.call("GetQueueAttributes", record=False, QueueUrl=url, AttributeNames=["QueueArn"])
    return url, str(arn["response"]["Attributes"]["QueueArn"])


@scenario
def sns_create_list_and_delete_topics(t: Target) -> list[dict]:
    arn = _topic(t)
    _topic(t)  # again: the same ARN
    t.sns("ListTopics")
    t.sns("DeleteTopic", TopicArn=arn)
    t.sns("ListTopics")
    t.sns("GetTopicAttributes", TopicArn=arn)
    return t.answers


@scenario
def sns_topic_attributes_are_set_and_shown(t: Target) -> list[dict]:
    arn = _topic(t)
    t.sns("SetTopicAttributes", TopicArn=arn, AttributeName="DisplayName",
          AttributeValue="shown")
    t.sns("GetTopicAttributes", TopicArn=arn)
    t.sns("SetTopicAttributes", TopicArn=arn, AttributeName="NotAnAttribute",
          AttributeValue="x")
    return t.answers


@scenario
def sns_tags_are_added_listed_and_removed(t: Target) -> list[dict]:
    arn = _topic(t)
    t.sns("TagResource", ResourceArn=arn, Tags=[{"Key": "a", "Value": "1"}])
    t.sns("ListTagsForResource", ResourceArn=arn)
    t.sns("UntagResource", ResourceArn=arn, TagKeys=["a"])
    t.sns("ListTagsForResource", ResourceArn=arn)
    return t.answers


@scenario
def sns_subscriptions_of_a_queue_are_listed_shown_and_removed(t: Target) -> list[dict]:
    arn = _topic(t)
    _, queue = _queue_arn(t)
    sub = t.sns("Subscribe", TopicArn=arn, Protocol="sqs", Endpoint=queue)
    sub_arn = sub["response"]["SubscriptionArn"]
    t.sns("ListSubscriptionsByTopic", TopicArn=arn)
    t.sns("SetSubscriptionAttributes", SubscriptionArn=sub_arn,
          AttributeName="RawMessageDelivery", AttributeValue="true")
    t.sns("GetSubscriptionAttributes", SubscriptionArn=sub_arn)
    t.sns("Unsubscribe", SubscriptionArn=sub_arn)
    t.sns("ListSubscriptionsByTopic", TopicArn=arn)
    return t.answers


@scenario
def sns_raw_delivery_with_a_filter_policy_reaches_the_queue(t: Target) -> list[dict]:
    arn = _topic(t)
    url, queue = _queue_arn(t)
    t.sns("Subscribe", TopicArn=arn, Protocol="sqs", Endpoint=queue, Attributes={
        "RawMessageDelivery": "true", "FilterPolicy": json.dumps({"color": ["red"]})})
    for color in ("red", "blue"):
        t.sns("Publish", TopicArn=arn, Message=f"a {color} one", MessageAttributes={
            "color": {"DataType": "String", "StringValue": color}})
    t.call("ReceiveMessage", QueueUrl=url, MaxNumberOfMessages=10,
           MessageAttributeNames=["All"])
    return t.answers


@scenario
def sns_publish_refusals(t: Target) -> list[dict]:
    arn = _topic(t)
    t.sns("Publish", TopicArn=arn + "-missing", Message="m")
    t.sns("Publish", TopicArn=arn, Message="m" * 262_145)
    t.sns("Publish", TopicArn=arn, Message="m", MessageStructure="json")
    return t.answers


@scenario
def sns_publish_batch_answers_per_entry(t: Target) -> list[dict]:
    arn = _topic(t)
    t.sns("PublishBatch", TopicArn=arn, PublishBatchRequestEntries=[
        {"Id": "a", "Message": "one"}, {"Id": "b", "Message": "two"}])
    t.sns("PublishBatch", TopicArn=arn, PublishBatchRequestEntries=[
        {"Id": str(n), "Message": "m"} for n in range(11)])
    t.sns("PublishBatch", TopicArn=arn, PublishBatchRequestEntries=[
        {"Id": "same", "Message": "m"}, {"Id": "same", "Message": "m"}])
    return t.answers


@scenario
def sns_fifo_topic_to_fifo_queue_keeps_order(t: Target) -> list[dict]:
    arn = _topic(t, "t.fifo", FifoTopic="true", ContentBasedDeduplication="true")
    url, queue = _queue_arn(t, "q.fifo", FifoQueue="true", ContentBasedDeduplication="true")
    t.sns("Subscribe", TopicArn=arn, Protocol="sqs", Endpoint=queue,
          Attributes={"RawMessageDelivery": "true"})
    for n in range(3):
        t.sns("Publish", TopicArn=arn, Message=f"m{n}", MessageGroupId="g")
    t.sns("Publish", TopicArn=arn, Message="no group")
    t.call("ReceiveMessage", QueueUrl=url, MaxNumberOfMessages=10)
    return t.answers
