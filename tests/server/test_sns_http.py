"""HTTP subscriptions against a live hopper on each store: the confirmation request
and ConfirmSubscription by its SubscribeURL, notifications POSTed with SNS's headers
and a signature that verifies, retries under the delivery policy, then the
dead-letter queue."""

from __future__ import annotations

import base64
import json
import urllib.request

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding

from hopper.sns.signing import canonical

from .http_subscribers import Subscriber, subscriber
from .sns_clients import queue_with_arn, receive_all, sns_client, sqs_in, unique

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def sns(endpoint: str):
    return sns_client(endpoint)


def verify(message: dict) -> None:
    """As SNS message-validation libraries check a message (by its SignatureVersion)."""
    version = message["SignatureVersion"]
    certificate = urllib.request.urlopen(message["SigningCertURL"]).read()
    key = x509.load_pem_x509_certificate(certificate).public_key()
    algorithm = hashes.SHA256() if version == "2" else hashes.SHA1()
    key.verify(base64.b64decode(message["Signature"]), canonical(message),
               padding.PKCS1v15(), algorithm)


def confirmed(sns, topic: str, http: Subscriber, **attributes: str) -> str:
    answer = sns.subscribe(TopicArn=topic, Protocol="http", Endpoint=http.url + "/hook",
                           Attributes=attributes)
    assert answer["SubscriptionArn"] == "pending confirmation"
    request = http.next()
    assert request.headers["x-amz-sns-message-type"] == "SubscriptionConfirmation"
    confirmation = json.loads(request.body)
    verify(confirmation)
    assert confirmation["TopicArn"] == topic and confirmation["Token"]
    urllib.request.urlopen(confirmation["SubscribeURL"]).read()
    [sub] = sns.list_subscriptions_by_topic(TopicArn=topic)["Subscriptions"]
    assert sub["SubscriptionArn"] != "PendingConfirmation"
    return sub["SubscriptionArn"]


def test_an_http_subscriber_confirms_and_gets_signed_notifications(sns) -> None:
    topic = sns.create_topic(Name=unique("t"), Attributes={"SignatureVersion": "2"})["TopicArn"]
    with subscriber() as http:
        sub = confirmed(sns, topic, http)
        message_id = sns.publish(TopicArn=topic, Message="to the web", Subject="s")["MessageId"]
        request = http.next()
    assert request.path == "/hook"
    assert request.headers["x-amz-sns-message-type"] == "Notification"
    assert request.headers["x-amz-sns-message-id"] == message_id
    assert request.headers["x-amz-sns-topic-arn"] == topic
    assert request.headers["x-amz-sns-subscription-arn"] == sub
    assert request.headers["content-type"] == "text/plain; charset=UTF-8"
    notification = json.loads(request.body)
    assert (notification["Message"], notification["SignatureVersion"]) == ("to the web", "2")
    verify(notification)


def test_confirm_subscription_takes_the_token(sns) -> None:
    topic = sns.create_topic(Name=unique("t"))["TopicArn"]
    with subscriber() as http:
        sns.subscribe(TopicArn=topic, Protocol="http", Endpoint=http.url)
        token = json.loads(http.next().body)["Token"]
    arn = sns.confirm_subscription(TopicArn=topic, Token=token)["SubscriptionArn"]
    assert arn.startswith(topic + ":")
    attributes = sns.get_subscription_attributes(SubscriptionArn=arn)["Attributes"]
    assert attributes["PendingConfirmation"] == "false"


def test_raw_http_delivery_posts_the_message_itself(sns) -> None:
    topic = sns.create_topic(Name=unique("t"))["TopicArn"]
    with subscriber() as http:
        confirmed(sns, topic, http, RawMessageDelivery="true")
        sns.publish(TopicArn=topic, Message="bare")
        request = http.next()
    assert request.body == "bare"
    assert request.headers["x-amz-sns-rawdelivery"] == "true"


def test_failed_deliveries_are_retried_under_the_delivery_policy(sns) -> None:
    policy = {"healthyRetryPolicy": {"numRetries": 3, "minDelayTarget": 1,
                                     "maxDelayTarget": 1}}
    topic = sns.create_topic(Name=unique("t"))["TopicArn"]
    with subscriber() as http:
        confirmed(sns, topic, http, DeliveryPolicy=json.dumps(policy))
        http.statuses = [500, 503]
        sns.publish(TopicArn=topic, Message="eventually")
        attempts = [http.next(), http.next(), http.next()]
    assert [json.loads(a.body)["Message"] for a in attempts] == ["eventually"] * 3
    assert len({a.headers["x-amz-sns-message-id"] for a in attempts}) == 1


def test_deliveries_that_keep_failing_go_to_the_dead_letter_queue(sns, endpoint) -> None:
    sqs = sqs_in(endpoint)
    dlq, dlq_arn = queue_with_arn(sqs, unique("dlq"))
    policy = {"healthyRetryPolicy": {"numRetries": 1, "minDelayTarget": 1,
                                     "maxDelayTarget": 1}}
    topic = sns.create_topic(Name=unique("t"))["TopicArn"]
    with subscriber() as http:
        confirmed(sns, topic, http, DeliveryPolicy=json.dumps(policy),
                  RedrivePolicy=json.dumps({"deadLetterTargetArn": dlq_arn}))
        http.statuses = [500, 500]
        sns.publish(TopicArn=topic, Message="undeliverable")
        http.next(), http.next()
        [dead] = receive_all(sqs, dlq, 1)
    assert json.loads(dead["Body"])["Message"] == "undeliverable"
