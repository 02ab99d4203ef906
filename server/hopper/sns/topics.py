"""Topic rules beyond single attributes: creating one idempotently, permissions in its
policy, and tags. Pure functions over `Topic` values."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from hopper.sns import attributes
from hopper.sns.errors import InvalidParameter, TagLimitExceeded, invalid
from hopper.sns.model import Topic
from hopper.sns.names import check_topic_name

MAX_TAGS = 50
MAX_TAG_KEY = 128
MAX_TAG_VALUE = 256


def check_new(name: str, given: Mapping[str, str]) -> bool:
    """Whether the topic to create is FIFO; raises InvalidParameter for a bad name or
    attribute."""
    fifo = given.get("FifoTopic", "false") == "true"
    check_topic_name(name, fifo)
    for key, value in given.items():
        attributes.check_topic(key, value, fifo=fifo, creating=True)
    return fifo


def same_creation(existing: Topic, given: Mapping[str, str], tags: Mapping[str, str]) -> None:
    """AWS answers a re-create with the existing ARN when every attribute and tag given
    matches; otherwise InvalidParameter."""
    for key, value in given.items():
        if key == "FifoTopic" and value == "false" and not existing.fifo:
            continue
        if existing.attributes.get(key, _default(key)) != value:
            raise invalid("Attributes Reason: Topic already exists with different attributes")
    if tags and dict(tags) != dict(existing.tags):
        raise invalid("Tags Reason: Topic already exists with different tags")


def _default(key: str) -> str | None:
    return {"FifoTopic": "false", "ContentBasedDeduplication": "false"}.get(key)


def check_tags(tags: Mapping[str, str], *, existing: Mapping[str, str]) -> None:
    """SNS's tag rules: keys 1-128 characters, values up to 256, at most 50 on a topic.
    Raises InvalidParameter or TagLimitExceeded."""
    for key, value in tags.items():
        if not 1 <= len(key) <= MAX_TAG_KEY:
            raise invalid("Tag key must be between 1 and 128 characters")
        if len(value) > MAX_TAG_VALUE:
            raise invalid("Tag value must be at most 256 characters")
    if len({**existing, **tags}) > MAX_TAGS:
        raise TagLimitExceeded("Could not complete request: tag quota of per resource exceeded")


def with_permission(
    topic: Topic, label: str, accounts: Sequence[str], actions: Sequence[str]
) -> str:
    """The topic's policy with a statement `label` letting `accounts` call `actions`.
    Raises InvalidParameter when the label is taken."""
    policy = _policy(topic)
    if any(statement.get("Sid") == label for statement in policy["Statement"]):
        raise InvalidParameter("Invalid parameter: Statement already exists")
    principals = [f"arn:aws:iam::{account}:root" for account in accounts]
    policy["Statement"].append({
        "Sid": label,
        "Effect": "Allow",
        "Principal": {"AWS": principals[0] if len(principals) == 1 else principals},
        "Action": [f"SNS:{action}" for action in actions],
        "Resource": topic.arn,
    })
    return json.dumps(policy, separators=(",", ":"))


def without_permission(topic: Topic, label: str) -> str:
    policy = _policy(topic)
    policy["Statement"] = [s for s in policy["Statement"] if s.get("Sid") != label]
    return json.dumps(policy, separators=(",", ":"))


def _policy(topic: Topic) -> dict[str, Any]:
    text = topic.attributes.get("Policy") or attributes.default_policy(topic.arn, topic.account)
    policy = json.loads(text)
    if not isinstance(policy.get("Statement"), list):
        policy["Statement"] = [] if "Statement" not in policy else [policy["Statement"]]
    return dict(policy)
