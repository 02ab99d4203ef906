"""SNS subscriptions of hopper's own queues through boto3 against a live hopper on
each store: envelopes and their signatures, raw delivery, filter policies, dead-letter
queues, FIFO topics, and Publish's and PublishBatch's limits at their edges."""

from __future__ import annotations

import base64
import json
import urllib.request

import pytest
from botocore.exceptions import ClientError
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding

from hopper.sns.signing import canonical

from .sns_clients import queue_with_arn, receive_all, sns_client, sqs_in, unique

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def sns(endpoint: str):
    return sns_client(endpoint)


@pytest.fixture(scope="module")
def sqs(endpoint: str):
    return sqs_in(endpoint)


def code_of(call, **params) -> tuple[str, str]:
    with pytest.raises(ClientError) as caught:
        call(**params)
    return caught.value.response["Error"]["Code"], caught.value.response["Error"]["Message"]


def topic_and_queue(sns, sqs, **subscription_attributes: str):
    arn = sns.create_topic(Name=unique("t"))["TopicArn"]
    url, queue_arn = queue_with_arn(sqs, unique("q"))
    sub = sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=queue_arn,
                        Attributes=subscription_attributes)["SubscriptionArn"]
    return arn, url, sub


def test_an_enveloped_notification_carries_every_field_and_verifies(sns, sqs) -> None:
    arn, url, sub = topic_and_queue(sns, sqs)
    message_id = sns.publish(TopicArn=arn, Message="hello", Subject="greeting",
                             MessageAttributes={"k": {"DataType": "String",
                                                      "StringValue": "v"}})["MessageId"]
    [received] = receive_all(sqs, url, 1)
    envelope = json.loads(received["Body"])
    assert list(envelope) == ["Type", "MessageId", "TopicArn", "Subject", "Message",
                              "Timestamp", "SignatureVersion", "Signature",
                              "SigningCertURL", "UnsubscribeURL", "MessageAttributes"]
    assert (envelope["Type"], envelope["MessageId"], envelope["TopicArn"]) == (
        "Notification", message_id, arn)
    assert (envelope["Subject"], envelope["Message"]) == ("greeting", "hello")
    assert envelope["MessageAttributes"] == {"k": {"Type": "String", "Value": "v"}}
    assert "MessageAttributes" not in received
    certificate = urllib.request.urlopen(envelope["SigningCertURL"]).read()
    key = x509.load_pem_x509_certificate(certificate).public_key()
    key.verify(base64.b64decode(envelope["Signature"]), canonical(envelope),
               padding.PKCS1v15(), hashes.SHA1())


def test_raw_delivery_sends_the_message_with_its_attributes(sns, sqs) -> None:
    arn, url, _ = topic_and_queue(sns, sqs, RawMessageDelivery="true")
    sns.publish(TopicArn=arn, Message="raw body", MessageAttributes={
        "s": {"DataType": "String", "StringValue": "v"},
        "n": {"DataType": "Number", "StringValue": "42"},
        "b": {"DataType": "Binary", "BinaryValue": b"\x00\xff"},
    })
    [received] = receive_all(sqs, url, 1, MessageAttributeNames=["All"])
    assert received["Body"] == "raw body"
    assert received["MessageAttributes"] == {
        "s": {"DataType": "String", "StringValue": "v"},
        "n": {"DataType": "Number", "StringValue": "42"},
        "b": {"DataType": "Binary", "BinaryValue": b"\x00\xff"},
    }


def test_two_queues_with_different_filter_policies_get_their_own(sns, sqs) -> None:
    arn = sns.create_topic(Name=unique("t"))["TopicArn"]
    urls = {}
    for kind in ("red", "blue"):
        urls[kind], queue_arn = queue_with_arn(sqs, unique(kind))
        sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=queue_arn,
                      Attributes={"FilterPolicy": json.dumps({"color": [kind]}),
                                  "RawMessageDelivery": "true"})
    for color in ("red", "blue", "green", "red"):
        sns.publish(TopicArn=arn, Message=color,
                    MessageAttributes={"color": {"DataType": "String", "StringValue": color}})
    assert sorted(m["Body"] for m in receive_all(sqs, urls["red"], 2)) == ["red", "red"]
    assert [m["Body"] for m in receive_all(sqs, urls["blue"], 1)] == ["blue"]


def test_a_body_scoped_policy_filters_on_the_message(sns, sqs) -> None:
    policy = json.dumps({"order": {"total": [{"numeric": [">", 100]}]}})
    arn, url, _ = topic_and_queue(sns, sqs, FilterPolicy=policy,
                                  FilterPolicyScope="MessageBody", RawMessageDelivery="true")
    for total in (50, 150):
        sns.publish(TopicArn=arn, Message=json.dumps({"order": {"total": total}}))
    sns.publish(TopicArn=arn, Message="not json")
    assert [json.loads(m["Body"])["order"]["total"] for m in receive_all(sqs, url, 1)] == [150]


def test_message_structure_json_delivers_the_sqs_text(sns, sqs) -> None:
    arn, url, _ = topic_and_queue(sns, sqs, RawMessageDelivery="true")
    sns.publish(TopicArn=arn, MessageStructure="json",
                Message=json.dumps({"default": "for all", "sqs": "for queues"}))
    assert [m["Body"] for m in receive_all(sqs, url, 1)] == ["for queues"]
    assert code_of(sns.publish, TopicArn=arn, MessageStructure="json",
                   Message=json.dumps({"sqs": "x"})) == (
        "InvalidParameter",
        "Invalid parameter: Message Structure - No default entry in JSON message body")


def test_subscription_attributes_are_shown_and_set(sns, sqs) -> None:
    arn, _, sub = topic_and_queue(sns, sqs)
    shown = sns.get_subscription_attributes(SubscriptionArn=sub)["Attributes"]
    assert (shown["TopicArn"], shown["Protocol"], shown["RawMessageDelivery"]) == (
        arn, "sqs", "false")
    assert shown["PendingConfirmation"] == "false" and "FilterPolicy" not in shown
    dead = "arn:aws:sqs:us-east-1:000000000000:" + unique("dlq")
    for name, value in (("RawMessageDelivery", "true"),
                        ("FilterPolicy", json.dumps({"a": ["b"]})),
                        ("FilterPolicyScope", "MessageBody"),
                        ("RedrivePolicy", json.dumps({"deadLetterTargetArn": dead})),
                        ("DeliveryPolicy", json.dumps({"healthyRetryPolicy":
                                                       {"numRetries": 2}}))):
        sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName=name,
                                        AttributeValue=value)
        assert sns.get_subscription_attributes(SubscriptionArn=sub)["Attributes"][name] == value


@pytest.mark.parametrize(("name", "value"), [
    ("RawMessageDelivery", "yes"), ("FilterPolicyScope", "Body"), ("Unknown", "x"),
    ("FilterPolicy", json.dumps({f"k{n}": ["v"] for n in range(6)})),
    ("FilterPolicy", json.dumps({"a": {"b": ["c"]}})), ("RedrivePolicy", "{}"),
])
def test_subscription_attributes_sns_refuses(sns, sqs, name: str, value: str) -> None:
    _, _, sub = topic_and_queue(sns, sqs)
    assert code_of(sns.set_subscription_attributes, SubscriptionArn=sub, AttributeName=name,
                   AttributeValue=value)[0] == "InvalidParameter"


def test_subscribe_is_idempotent_listed_and_undone(sns, sqs) -> None:
    arn, _, sub = topic_and_queue(sns, sqs)
    endpoint = sns.get_subscription_attributes(SubscriptionArn=sub)["Attributes"]["Endpoint"]
    again = sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=endpoint)["SubscriptionArn"]
    assert again == sub
    listed = sns.list_subscriptions_by_topic(TopicArn=arn)["Subscriptions"]
    assert listed == [{"SubscriptionArn": sub, "Owner": "000000000000", "Protocol": "sqs",
                       "Endpoint": endpoint, "TopicArn": arn}]
    assert sub in [s["SubscriptionArn"] for s in sns.list_subscriptions()["Subscriptions"]]
    sns.unsubscribe(SubscriptionArn=sub)
    assert sns.list_subscriptions_by_topic(TopicArn=arn)["Subscriptions"] == []
    assert code_of(sns.get_subscription_attributes, SubscriptionArn=sub) == (
        "NotFound", "Subscription does not exist")


def test_the_unsubscribe_url_unsubscribes(sns, sqs) -> None:
    arn, url, sub = topic_and_queue(sns, sqs)
    sns.publish(TopicArn=arn, Message="m")
    [received] = receive_all(sqs, url, 1)
    urllib.request.urlopen(json.loads(received["Body"])["UnsubscribeURL"]).read()
    assert sns.list_subscriptions_by_topic(TopicArn=arn)["Subscriptions"] == []


def test_a_copy_for_a_deleted_queue_goes_to_the_dead_letter_queue(sns, sqs) -> None:
    dlq_url, dlq_arn = queue_with_arn(sqs, unique("dlq"))
    arn, url, _ = topic_and_queue(
        sns, sqs, RedrivePolicy=json.dumps({"deadLetterTargetArn": dlq_arn}),
        RawMessageDelivery="true")
    sqs.delete_queue(QueueUrl=url)
    sns.publish(TopicArn=arn, Message="lost")
    assert [m["Body"] for m in receive_all(sqs, dlq_url, 1)] == ["lost"]


@pytest.mark.parametrize(("protocol", "target", "message"), [
    ("carrier-pigeon", "x", "Invalid parameter: Amazon SNS does not support this protocol "
                            "string: carrier-pigeon"),
    ("sqs", "not-an-arn", "Invalid parameter: SQS endpoint ARN"),
    ("http", "https://example.com", "Invalid parameter: Endpoint must match the specified "
                                    "protocol"),
    ("sqs", "arn:aws:sqs:us-east-1:000000000000:q.fifo",
     "Invalid parameter: Invalid parameter: Endpoint Reason: FIFO SQS Queues can not be "
     "subscribed to standard SNS topics"),
])
def test_subscribe_refuses_what_sns_refuses(sns, protocol, target, message) -> None:
    arn = sns.create_topic(Name=unique("t"))["TopicArn"]
    assert code_of(sns.subscribe, TopicArn=arn, Protocol=protocol, Endpoint=target) == (
        "InvalidParameter", message)


def test_a_message_of_256_kib_is_published_and_one_byte_more_refused(sns, sqs) -> None:
    arn, url, _ = topic_and_queue(sns, sqs, RawMessageDelivery="true")
    attribute = {"a": {"DataType": "String", "StringValue": "x"}}  # 1 + 6 + 1 bytes
    sns.publish(TopicArn=arn, Message="m" * (262_144 - 8), MessageAttributes=attribute)
    assert len(receive_all(sqs, url, 1)[0]["Body"]) == 262_144 - 8
    assert code_of(sns.publish, TopicArn=arn, Message="m" * (262_144 - 7),
                   MessageAttributes=attribute) == (
        "InvalidParameter", "Invalid parameter: Message too long")


def test_subjects_of_99_characters_pass_and_100_do_not(sns) -> None:
    arn = sns.create_topic(Name=unique("t"))["TopicArn"]
    sns.publish(TopicArn=arn, Message="m", Subject="s" * 99)
    for subject in ("s" * 100, "line\nbreak", ""):
        assert code_of(sns.publish, TopicArn=arn, Message="m", Subject=subject) == (
            "InvalidParameter", "Invalid parameter: Subject")


@pytest.mark.parametrize(("attribute", "code"), [
    ({"DataType": "Float", "StringValue": "1"}, "ParameterValueInvalid"),
    ({"DataType": "Number", "StringValue": "one"}, "ParameterValueInvalid"),
    ({"DataType": "String", "StringValue": ""}, "ParameterValueInvalid"),
    ({"DataType": "String.Array", "StringValue": "[{}]"}, "ParameterValueInvalid"),
])
def test_bad_message_attributes_are_refused(sns, attribute, code) -> None:
    arn = sns.create_topic(Name=unique("t"))["TopicArn"]
    assert code_of(sns.publish, TopicArn=arn, Message="m",
                   MessageAttributes={"a": attribute})[0] == code


def test_publishing_to_a_missing_topic_is_not_found(sns) -> None:
    arn = "arn:aws:sns:us-east-1:000000000000:" + unique("gone")
    assert code_of(sns.publish, TopicArn=arn, Message="m") == ("NotFound",
                                                               "Topic does not exist")


def test_publish_batch_takes_ten_entries_and_fails_bad_ones_alone(sns, sqs) -> None:
    arn, url, _ = topic_and_queue(sns, sqs, RawMessageDelivery="true")
    entries = [{"Id": f"e{n}", "Message": f"m{n}"} for n in range(9)]
    answer = sns.publish_batch(TopicArn=arn, PublishBatchRequestEntries=[
        *entries, {"Id": "bad", "Message": ""}])
    assert [s["Id"] for s in answer["Successful"]] == [f"e{n}" for n in range(9)]
    assert answer["Failed"] == [{"Id": "bad", "Code": "InvalidParameter", "SenderFault": True,
                                 "Message": "Invalid parameter: Empty message"}]
    assert sorted(m["Body"] for m in receive_all(sqs, url, 9)) == [f"m{n}" for n in range(9)]


@pytest.mark.parametrize(("entries", "code"), [
    ([], "EmptyBatchRequest"),
    ([{"Id": f"e{n}", "Message": "m"} for n in range(11)], "TooManyEntriesInBatchRequest"),
    ([{"Id": "same", "Message": "m"}, {"Id": "same", "Message": "m"}],
     "BatchEntryIdsNotDistinct"),
    ([{"Id": "no spaces", "Message": "m"}], "InvalidBatchEntryId"),
    ([{"Id": "x" * 81, "Message": "m"}], "InvalidBatchEntryId"),
    ([{"Id": "a", "Message": "m" * 131_072}, {"Id": "b", "Message": "m" * 131_073}],
     "BatchRequestTooLong"),
])
def test_publish_batch_refuses_whole_batches(sns, entries, code) -> None:
    arn = sns.create_topic(Name=unique("t"))["TopicArn"]
    assert code_of(sns.publish_batch, TopicArn=arn, PublishBatchRequestEntries=entries)[0] == code


def test_a_fifo_topic_delivers_in_order_per_group_once_per_deduplication_id(sns, sqs) -> None:
    arn = sns.create_topic(Name=unique("f") + ".fifo",
                           Attributes={"FifoTopic": "true"})["TopicArn"]
    url, queue_arn = queue_with_arn(sqs, unique("q") + ".fifo", FifoQueue="true")
    sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=queue_arn,
                  Attributes={"RawMessageDelivery": "true"})
    sequence = []
    for n in range(5):
        answer = sns.publish(TopicArn=arn, Message=f"m{n}", MessageGroupId="g",
                             MessageDeduplicationId=f"d{n}")
        sequence.append(int(answer["SequenceNumber"]))
    sns.publish(TopicArn=arn, Message="again", MessageGroupId="g", MessageDeduplicationId="d0")
    assert sequence == sorted(sequence)
    received = receive_all(sqs, url, 6, MessageSystemAttributeNames=["MessageGroupId"])
    assert [m["Body"] for m in received] == [f"m{n}" for n in range(5)]
    assert {m["Attributes"]["MessageGroupId"] for m in received} == {"g"}


def test_fifo_topic_rules(sns, sqs) -> None:
    arn = sns.create_topic(Name=unique("f") + ".fifo",
                           Attributes={"FifoTopic": "true"})["TopicArn"]
    assert code_of(sns.publish, TopicArn=arn, Message="m") == (
        "InvalidParameter",
        "Invalid parameter: The MessageGroupId parameter is required for FIFO topics")
    assert code_of(sns.publish, TopicArn=arn, Message="m", MessageGroupId="g")[1].endswith(
        "ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly")
    _, standard = queue_with_arn(sqs, unique("q"))
    assert code_of(sns.subscribe, TopicArn=arn, Protocol="sqs", Endpoint=standard) == (
        "InvalidParameter", "Invalid parameter: Endpoint Reason: Please use FIFO SQS queue")
    plain = sns.create_topic(Name=unique("t"))["TopicArn"]
    assert code_of(sns.publish, TopicArn=plain, Message="m", MessageGroupId="g")[0] == (
        "InvalidParameter")


def test_raw_delivery_carries_ten_attributes_and_an_eleventh_fails_to_the_dlq(sns, sqs) -> None:
    # SNS takes more than 10 attributes; an SQS message holds 10 (SNS Developer Guide,
    # "Amazon SNS message attributes": raw delivery to SQS sends at most 10).
    dlq_url, dlq_arn = queue_with_arn(sqs, unique("dlq"))
    arn, url, _ = topic_and_queue(
        sns, sqs, RawMessageDelivery="true",
        RedrivePolicy=json.dumps({"deadLetterTargetArn": dlq_arn}))
    _, enveloped_arn = queue_with_arn(sqs, unique("env"))
    enveloped = sqs.get_queue_url(QueueName=enveloped_arn.rsplit(":", 1)[1])["QueueUrl"]
    sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=enveloped_arn)

    def attributes(count: int) -> dict:
        return {f"a{n}": {"DataType": "String", "StringValue": "v"} for n in range(count)}

    sns.publish(TopicArn=arn, Message="ten", MessageAttributes=attributes(10))
    sns.publish(TopicArn=arn, Message="eleven", MessageAttributes=attributes(11))
    assert [m["Body"] for m in receive_all(sqs, url, 2)] == ["ten"]
    assert [m["Body"] for m in receive_all(sqs, dlq_url, 1)] == ["eleven"]
    counts = sorted(len(json.loads(m["Body"])["MessageAttributes"])
                    for m in receive_all(sqs, enveloped, 2))
    assert counts == [10, 11]
