"""Subscription rules: which protocols and endpoints SNS takes, which need confirming,
and which queue a subscription's endpoint names. Pure functions."""

from __future__ import annotations

import re
from collections.abc import Mapping

from hopper.sns import attributes
from hopper.sns.errors import InvalidParameter, invalid
from hopper.sns.model import Subscription, Topic
from hopper.sns.names import parse_arn

PROTOCOLS = frozenset({
    "http", "https", "email", "email-json", "sms", "sqs", "application", "lambda", "firehose",
})
# Endpoints that must confirm before they get notifications (the others are confirmed
# by their owner's permission, which hopper takes as given).
CONFIRMED_BY_TOKEN = frozenset({"http", "https", "email", "email-json"})
_PHONE = re.compile(r"\+?[0-9]{5,15}")
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+")


def check(topic: Topic, protocol: str, endpoint: str, given: Mapping[str, str]) -> None:
    """Raises InvalidParameter for a subscription SNS refuses."""
    if protocol not in PROTOCOLS:
        raise invalid(f"Amazon SNS does not support this protocol string: {protocol}")
    _check_endpoint(protocol, endpoint)
    if topic.fifo and protocol not in ("sqs", "firehose"):
        raise invalid(f"Invalid protocol type: {protocol}")
    if protocol == "sqs":
        _check_queue_type(topic, endpoint)
    for name, value in given.items():
        attributes.check_subscription(name, value, given)
    if protocol == "firehose" and "SubscriptionRoleArn" not in given:
        raise invalid("Attributes Reason: SubscriptionRoleArn is required for firehose")


def _check_endpoint(protocol: str, endpoint: str) -> None:
    if protocol in ("http", "https"):
        if not endpoint.lower().startswith(f"{protocol}://") or len(endpoint) <= len(protocol) + 3:
            raise invalid("Endpoint must match the specified protocol")
    elif protocol == "sqs":
        if _service(endpoint) != "sqs":
            raise invalid("SQS endpoint ARN")
    elif protocol in ("email", "email-json"):
        if not _EMAIL.fullmatch(endpoint):
            raise invalid("Email address")
    elif protocol == "sms":
        if not _PHONE.fullmatch(endpoint):
            raise InvalidParameter(f"Invalid SMS endpoint: {endpoint}")
    elif _service(endpoint) is None:
        raise invalid(f"{protocol} endpoint ARN")


def _service(arn: str) -> str | None:
    parts = parse_arn(arn)
    return None if parts is None else parts[0]


def _check_queue_type(topic: Topic, endpoint: str) -> None:
    fifo_queue = endpoint.endswith(".fifo")
    if fifo_queue and not topic.fifo:
        raise invalid(
            "Invalid parameter: Endpoint Reason: FIFO SQS Queues can not be subscribed to "
            "standard SNS topics"
        )
    if topic.fifo and not fifo_queue:
        raise invalid("Endpoint Reason: Please use FIFO SQS queue")


def same_subscription(existing: Subscription, given: Mapping[str, str]) -> None:
    """A repeated Subscribe returns the existing subscription when the attributes given
    match its own; otherwise InvalidParameter."""
    for name, value in given.items():
        if existing.attributes.get(name) != value:
            raise invalid("Attributes Reason: Subscription already exists with different "
                          "attributes")


def needs_confirmation(protocol: str) -> bool:
    return protocol in CONFIRMED_BY_TOKEN
