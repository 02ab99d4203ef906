"""Tags: TagQueue, UntagQueue, ListQueueTags, and tags given at creation."""

from __future__ import annotations

from conformance.registry import scenario
from conformance.target import Target


@scenario
def tag_queue_untag_queue_and_list_queue_tags_agree(t: Target) -> list[dict]:
    url = t.create_queue()
    t.call("ListQueueTags", QueueUrl=url)
    t.call("TagQueue", QueueUrl=url, Tags={"team": "core", "cost": "42"})
    t.call("TagQueue", QueueUrl=url, Tags={"team": "edge"})
    t.call("ListQueueTags", QueueUrl=url)
    t.call("UntagQueue", QueueUrl=url, TagKeys=["cost", "never-set"])
    t.call("ListQueueTags", QueueUrl=url)
    return t.answers


@scenario
def create_queue_with_tags_tags_the_queue(t: Target) -> list[dict]:
    t.call("CreateQueue", QueueName=t.queue_name(), tags={"owner": "conformance"})
    url = t.create_queue(record=False)
    t.call("ListQueueTags", QueueUrl=url)
    return t.answers


@scenario
def tagging_a_missing_queue_is_non_existent_queue(t: Target) -> list[dict]:
    url = t.create_queue(record=False).replace(t.queue_name(), t.queue_name("missing"))
    t.call("TagQueue", QueueUrl=url, Tags={"a": "b"})
    t.call("UntagQueue", QueueUrl=url, TagKeys=["a"])
    t.call("ListQueueTags", QueueUrl=url)
    return t.answers
