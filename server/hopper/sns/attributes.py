"""Topic and subscription attributes: which may be set, their values' rules, and what
GetTopicAttributes and GetSubscriptionAttributes show. Texts are AWS's where known."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from hopper.sns import delivery_policies, filter_policies
from hopper.sns.errors import InvalidParameter, invalid
from hopper.sns.model import Subscription, Topic

# Settable on any topic; FifoTopic only at creation; ContentBasedDeduplication and
# FifoThroughputScope only on FIFO topics. ArchivePolicy and DataProtectionPolicy are
# kept and shown without effect (no replay, no data protection here).
TOPIC_SETTABLE = frozenset({
    "DeliveryPolicy", "DisplayName", "Policy", "KmsMasterKeyId", "SignatureVersion",
    "TracingConfig", "ContentBasedDeduplication", "ArchivePolicy", "FifoThroughputScope",
    "DataProtectionPolicy",
})
SUBSCRIPTION_SETTABLE = frozenset({
    "DeliveryPolicy", "FilterPolicy", "FilterPolicyScope", "RawMessageDelivery",
    "RedrivePolicy", "SubscriptionRoleArn", "ReplayPolicy",
})
_JSON_ATTRIBUTES = ("Policy", "DeliveryPolicy", "ArchivePolicy", "DataProtectionPolicy")
_DEFAULT_DELIVERY_POLICY = {
    "http": {
        "defaultHealthyRetryPolicy": {
            "minDelayTarget": 20, "maxDelayTarget": 20, "numRetries": 3,
            "numMaxDelayRetries": 0, "numNoDelayRetries": 0, "numMinDelayRetries": 0,
            "backoffFunction": "linear",
        },
        "disableSubscriptionOverrides": False,
        "defaultRequestPolicy": {"headerContentType": "text/plain; charset=UTF-8"},
    }
}


def check_topic(name: str, value: str, *, fifo: bool, creating: bool) -> None:
    """Raises InvalidParameter for an attribute a topic may not have or a bad value."""
    if name == "FifoTopic":
        if not creating:
            raise invalid("AttributeName")
        if value not in ("true", "false"):
            raise invalid("Attributes Reason: FifoTopic: Invalid value [" + value + "]")
        return
    if name not in TOPIC_SETTABLE:
        raise invalid("AttributeName")
    if name in ("ContentBasedDeduplication", "FifoThroughputScope") and not fifo:
        raise invalid(f"Attributes Reason: {name} is only valid for FIFO topics")
    _check_topic_value(name, value)


def _check_topic_value(name: str, value: str) -> None:
    if name == "SignatureVersion" and value not in ("1", "2"):
        raise invalid("Attributes Reason: SignatureVersion: Invalid value [" + value + "]")
    if name == "TracingConfig" and value not in ("PassThrough", "Active"):
        raise invalid("Attributes Reason: TracingConfig: Invalid value [" + value + "]")
    if name == "ContentBasedDeduplication" and value not in ("true", "false"):
        raise invalid(f"Attributes Reason: ContentBasedDeduplication: Invalid value [{value}]")
    if name == "FifoThroughputScope" and value not in ("Topic", "MessageGroup"):
        raise invalid(f"Attributes Reason: FifoThroughputScope: Invalid value [{value}]")
    if name == "DisplayName" and len(value) > 100:
        raise invalid("DisplayName")
    if name in _JSON_ATTRIBUTES and value != "":
        _json_object(name, value)
    if name == "DeliveryPolicy" and value != "":
        delivery_policies.check(value)


def _json_object(name: str, value: str) -> dict[str, Any]:
    try:
        parsed = json.loads(value)
    except (ValueError, RecursionError):
        raise invalid(f"{name}: failed to parse JSON.") from None
    if not isinstance(parsed, dict):
        raise invalid(f"{name}: must be a JSON object.")
    return parsed


def default_policy(arn: str, account: str) -> str:
    """The policy AWS gives a new topic: its owner may do everything."""
    statement = {
        "Sid": "__default_statement_ID",
        "Effect": "Allow",
        "Principal": {"AWS": "*"},
        "Action": [
            "SNS:GetTopicAttributes", "SNS:SetTopicAttributes", "SNS:AddPermission",
            "SNS:RemovePermission", "SNS:DeleteTopic", "SNS:Subscribe",
            "SNS:ListSubscriptionsByTopic", "SNS:Publish",
        ],
        "Resource": arn,
        "Condition": {"StringEquals": {"AWS:SourceOwner": account}},
    }
    policy = {"Version": "2008-10-17", "Id": "__default_policy_ID", "Statement": [statement]}
    return json.dumps(policy, separators=(",", ":"))


def topic_view(topic: Topic, counts: Mapping[str, int]) -> dict[str, str]:
    """GetTopicAttributes: what AWS shows of a topic. `counts`: SubscriptionsConfirmed,
    SubscriptionsPending, SubscriptionsDeleted."""
    view = {
        "TopicArn": topic.arn,
        "Owner": topic.account,
        "Policy": default_policy(topic.arn, topic.account),
        "DisplayName": "",
        "EffectiveDeliveryPolicy": json.dumps(_DEFAULT_DELIVERY_POLICY, separators=(",", ":")),
        **{name: str(count) for name, count in counts.items()},
    }
    if topic.fifo:
        view["FifoTopic"] = "true"
        view["ContentBasedDeduplication"] = "false"
    view.update({k: v for k, v in topic.attributes.items() if k != "FifoTopic" or topic.fifo})
    if "DeliveryPolicy" in topic.attributes:
        view["EffectiveDeliveryPolicy"] = topic.attributes["DeliveryPolicy"]
    return view


def check_subscription(name: str, value: str, attributes: Mapping[str, str]) -> None:
    """Raises InvalidParameter (or FilterPolicyLimitExceeded) for a subscription
    attribute SNS refuses. `attributes` are the subscription's others, as they will be
    (the filter policy is checked against its scope)."""
    if name not in SUBSCRIPTION_SETTABLE:
        raise invalid("AttributeName")
    if name == "RawMessageDelivery" and value.lower() not in ("true", "false"):
        raise invalid(
            f"Attributes Reason: RawMessageDelivery: Invalid value [{value}]. "
            "Must be true or false."
        )
    if name == "FilterPolicyScope" and value not in ("MessageAttributes", "MessageBody"):
        raise invalid(
            f"Attributes Reason: FilterPolicyScope: Invalid value [{value}]. "
            "Please use either MessageBody or MessageAttributes"
        )
    if name in ("FilterPolicy", "FilterPolicyScope"):
        policy = value if name == "FilterPolicy" else attributes.get("FilterPolicy", "")
        scope = value if name == "FilterPolicyScope" else attributes.get("FilterPolicyScope")
        if policy:
            filter_policies.check(policy, body_scope=scope == "MessageBody")
    if name == "RedrivePolicy" and value != "":
        dead_letter_target(value)
    if name == "DeliveryPolicy" and value != "":
        delivery_policies.check(value)


def dead_letter_target(redrive_policy: str) -> str:
    """The queue ARN a subscription's RedrivePolicy names; raises InvalidParameter."""
    try:
        parsed = json.loads(redrive_policy)
    except (ValueError, RecursionError):
        raise invalid("RedrivePolicy: failed to parse JSON.") from None
    target = parsed.get("deadLetterTargetArn") if isinstance(parsed, dict) else None
    if not isinstance(target, str) or not target.startswith("arn:"):
        raise InvalidParameter(
            "Invalid parameter: RedrivePolicy: deadLetterTargetArn is missing or invalid"
        )
    return target


def raw_delivery(subscription: Subscription) -> bool:
    return subscription.attributes.get("RawMessageDelivery", "false").lower() == "true"


def subscription_view(subscription: Subscription) -> dict[str, str]:
    """GetSubscriptionAttributes: what AWS shows of a subscription."""
    view = {
        "SubscriptionArn": subscription.arn,
        "TopicArn": subscription.topic_arn,
        "Owner": subscription.owner,
        "Protocol": subscription.protocol,
        "Endpoint": subscription.endpoint,
        "ConfirmationWasAuthenticated": "true" if subscription.confirmed else "false",
        "PendingConfirmation": "false" if subscription.confirmed else "true",
        "RawMessageDelivery": "false",
        "SubscriptionPrincipal": f"arn:aws:iam::{subscription.owner}:root",
    }
    view.update(subscription.attributes)
    # AWS shows the scope only with a policy, and the default scope with one.
    if view.get("FilterPolicy"):
        view.setdefault("FilterPolicyScope", "MessageAttributes")
    else:
        view.pop("FilterPolicyScope", None)
        view.pop("FilterPolicy", None)
    if subscription.protocol in ("http", "https"):
        view["EffectiveDeliveryPolicy"] = subscription.attributes.get(
            "DeliveryPolicy", json.dumps(_DEFAULT_DELIVERY_POLICY["http"], separators=(",", ":"))
        )
    return view
