"""AWS's recorded answers at the edges that issue 17 brought in: empty tag calls,
FIFO-only attributes on a standard queue, bare queue names, attribute names beyond
ASCII and `*`, resetting KMS, a FIFO batch without deduplication ids, GetQueueUrl on
a queue URL."""

from __future__ import annotations

from tests.server.query_client import path_of

from conformance.registry import scenario
from conformance.target import Target


@scenario
def tag_calls_without_tags_are_refused(t: Target) -> list[dict]:
    url = t.create_queue(record=False)
    t.call("TagQueue", QueueUrl=url, Tags={})
    t.call("UntagQueue", QueueUrl=url, TagKeys=[])
    t.query("TagQueue", {"QueueUrl": url})
    t.query("UntagQueue", {"QueueUrl": url})
    return t.answers


@scenario
def fifo_only_attributes_on_a_standard_queue_are_invalid_attribute_name(t: Target) -> list[dict]:
    for number, (name, value) in enumerate([
        ("FifoQueue", "false"),
        ("ContentBasedDeduplication", "true"),
        ("DeduplicationScope", "queue"),
        ("FifoThroughputLimit", "perQueue"),
    ]):
        t.call("CreateQueue", QueueName=t.queue_name(f"s{number}"), Attributes={name: value})
    t.query("CreateQueue", {"QueueName": t.queue_name("s9"), "Attributes": {"FifoQueue": "false"}})
    return t.answers


@scenario
def a_bare_queue_name_names_the_callers_queue(t: Target) -> list[dict]:
    t.create_queue(record=False)
    name = t.queue_name()
    t.call("SendMessage", QueueUrl=name, MessageBody="by name")
    t.call("GetQueueAttributes", QueueUrl=name, AttributeNames=["ApproximateNumberOfMessages"])
    t.query("SendMessage", {"QueueUrl": name, "MessageBody": "by name"})
    t.call("PurgeQueue", QueueUrl=name)
    return t.answers


@scenario
def attribute_names_take_latin_letters_and_star_selects_them_all(t: Target) -> list[dict]:
    url = t.create_queue(record=False)
    attributes = {
        "attr.1\u00f8\u00df\u00e4": {"DataType": "String", "StringValue": "v"},
        "plain": {"DataType": "Number", "StringValue": "1"},
    }
    t.call("SendMessage", QueueUrl=url, MessageBody="m", MessageAttributes=attributes)
    t.call("ReceiveMessage", QueueUrl=url, MessageAttributeNames=["*"])
    return t.answers


@scenario
def resetting_the_kms_key_drops_the_kms_attributes(t: Target) -> list[dict]:
    url = t.create_queue(record=False, KmsMasterKeyId="alias/aws/sqs")
    t.call("SetQueueAttributes", QueueUrl=url,
           Attributes={"KmsMasterKeyId": "", "KmsDataKeyReusePeriodSeconds": "300"})
    t.call("GetQueueAttributes", QueueUrl=url, AttributeNames=["All"])
    return t.answers


@scenario
def a_fifo_batch_entry_without_deduplication_id_fails_the_call(t: Target) -> list[dict]:
    url = t.create_queue("q.fifo", record=False, FifoQueue="true")
    t.call("SendMessageBatch", QueueUrl=url, Entries=[
        {"Id": "a", "MessageBody": "a", "MessageGroupId": "g", "MessageDeduplicationId": "a"},
        {"Id": "b", "MessageBody": "b", "MessageGroupId": "g"},
    ])
    return t.answers


@scenario
def get_queue_url_on_a_queue_url_answers_the_named_queue(t: Target) -> list[dict]:
    url = t.create_queue(record=False)
    t.create_queue("other", record=False)
    t.query("GetQueueUrl", {"QueueName": t.queue_name("other")}, path=path_of(url))
    t.query("GetQueueUrl", {"QueueName": t.queue_name("other")}, path=path_of(url), method="GET")
    return t.answers
