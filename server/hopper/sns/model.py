"""The topic core's data: frozen values passed across the topic store seam."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from hopper.core.model import MessageAttribute


@dataclass(frozen=True)
class Topic:
    """A topic as the store holds it. `attributes` are the settable ones as the client
    gave them (DisplayName, Policy, DeliveryPolicy, FifoTopic, ...), by SNS's names."""

    arn: str
    attributes: Mapping[str, str] = field(default_factory=dict)
    tags: Mapping[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.arn.rsplit(":", 1)[1]

    @property
    def account(self) -> str:
        return self.arn.split(":")[4]

    @property
    def region(self) -> str:
        return self.arn.split(":")[3]

    @property
    def fifo(self) -> bool:
        return self.attributes.get("FifoTopic") == "true"


@dataclass(frozen=True)
class Subscription:
    """A subscription of `endpoint` (a queue ARN, a URL, an address) to a topic.

    `token` is the confirmation token of a subscription that must be confirmed (HTTP,
    email); `confirmed` says whether it has been."""

    arn: str
    topic_arn: str
    owner: str
    protocol: str
    endpoint: str
    attributes: Mapping[str, str] = field(default_factory=dict)
    confirmed: bool = True
    token: str | None = None


@dataclass(frozen=True)
class Publication:
    """One message published to a topic, as the core has validated it.

    `message` is the default text; `per_protocol` the texts of MessageStructure=json
    by protocol. `timestamp` is epoch seconds."""

    id: str
    topic_arn: str
    message: str
    timestamp: float
    subject: str | None = None
    attributes: Mapping[str, MessageAttribute] = field(default_factory=dict)
    per_protocol: Mapping[str, str] = field(default_factory=dict)
    group_id: str | None = None
    deduplication_id: str | None = None
    sequence_number: int | None = None

    def text_for(self, protocol: str) -> str:
        return self.per_protocol.get(protocol, self.message)


@dataclass(frozen=True)
class Sent:
    """What would have been sent to a subscriber hopper does not reach (email, SMS,
    application, Lambda, Firehose): kept for tests to read."""

    subscription_arn: str
    protocol: str
    endpoint: str
    body: str


@dataclass(frozen=True)
class Post:
    """One notification for an HTTP/S subscriber, kept by the store until it is
    delivered or given up (so deliveries survive a restart where the store does).
    `attempts` made so far; due at `due_at` (epoch seconds)."""

    id: str
    subscription_arn: str
    topic_arn: str
    url: str
    headers: Mapping[str, str]
    body: str
    attempts: int = 0
    due_at: float = 0.0
