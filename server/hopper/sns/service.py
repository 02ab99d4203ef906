"""TopicService: one async method per SNS action on topics and subscriptions, SNS's
rules written once (publishing is in deliveries.py). The wire layer decodes a request
into these calls; the store keeps what they decide.

Every method raises the `hopper.sns.errors` its docstring names; NotFound's texts are
AWS's ("Topic does not exist", "Subscription does not exist").
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from hopper.core.clock import Clock, SystemClock
from hopper.core.ids import new_id
from hopper.core.model import QueueKey
from hopper.sns import attributes, names, subscriptions, topics
from hopper.sns.errors import InvalidParameter, NotFound, ResourceNotFound, invalid
from hopper.sns.model import Subscription, Topic
from hopper.sns.store import TopicStore

PAGE_SIZE = 100
TOPIC_NOT_FOUND = "Topic does not exist"
SUBSCRIPTION_NOT_FOUND = "Subscription does not exist"
PENDING = "pending confirmation"
_RAW_PROTOCOLS = frozenset({"sqs", "http", "https", "firehose"})
# Turns a queue ARN into the queue it names, or None (the wire's region rules).
QueueResolver = Callable[[str], QueueKey | None]


@dataclass(frozen=True)
class Page:
    items: list[Topic] | list[Subscription]
    next_token: str | None


class TopicService:
    def __init__(self, store: TopicStore, *, clock: Clock | None = None) -> None:
        self.store = store
        self.clock = clock or SystemClock()
        # Set by sns_http.attach: sends a new HTTP/S subscription its confirmation
        # request (topic, subscription, this server's base URL as the client reached it).
        self.on_pending: Callable[[Topic, Subscription, str], None] | None = None

    # --- topics ---------------------------------------------------------------------

    async def create_topic(
        self, region: str, account: str, name: str,
        given: Mapping[str, str], tags: Mapping[str, str],
    ) -> Topic:
        """CreateTopic: the new topic, or the existing one when everything given matches
        it. Raises InvalidParameter, TagLimitExceeded."""
        fifo = topics.check_new(name, given)
        topics.check_tags(tags, existing={})
        stored = {k: v for k, v in given.items() if k != "FifoTopic" or fifo}
        topic = Topic(names.topic_arn(region, account, name), stored, dict(tags))
        existing, created = await self.store.create_topic(topic)
        if not created:
            topics.same_creation(existing, given, tags)
        return existing

    async def topic(self, arn: str) -> Topic:
        """The topic of `arn`. Raises NotFound (InvalidParameter for a malformed ARN)."""
        if not names.is_topic_arn(arn):
            raise invalid("TopicArn")
        topic = await self.store.get_topic(arn)
        if topic is None:
            raise NotFound(TOPIC_NOT_FOUND)
        return topic

    async def delete_topic(self, arn: str) -> None:
        """DeleteTopic, with its subscriptions; deleting a topic that is gone succeeds."""
        if not names.is_topic_arn(arn):
            raise invalid("TopicArn")
        await self.store.delete_topic(arn)

    async def list_topics(self, region: str, account: str, token: str | None) -> Page:
        prefix = names.account_prefix(region, account)
        found = await self.store.list_topics(prefix, after=_after(token, prefix),
                                             limit=PAGE_SIZE + 1)
        return _page(found, lambda topic: topic.arn)

    async def topic_attributes(self, arn: str) -> dict[str, str]:
        """GetTopicAttributes. Raises NotFound."""
        topic = await self.topic(arn)
        subs = await self.store.list_subscriptions(arn + ":", after=None, limit=10**9)
        confirmed = sum(1 for sub in subs if sub.confirmed)
        counts = {"SubscriptionsConfirmed": confirmed,
                  "SubscriptionsPending": len(subs) - confirmed, "SubscriptionsDeleted": 0}
        return attributes.topic_view(topic, counts)

    async def set_topic_attribute(self, arn: str, name: str, value: str) -> None:
        """SetTopicAttributes. Raises NotFound, InvalidParameter."""
        topic = await self.topic(arn)
        attributes.check_topic(name, value, fifo=topic.fifo, creating=False)
        await self._update(topic, attributes={**topic.attributes, name: value})

    async def add_permission(
        self, arn: str, label: str, accounts: Sequence[str], actions: Sequence[str]
    ) -> None:
        """AddPermission: a statement in the topic's Policy. Raises NotFound,
        InvalidParameter."""
        topic = await self.topic(arn)
        if not label or not accounts or not actions:
            raise invalid("Label, AWSAccountId and ActionName are required")
        policy = topics.with_permission(topic, label, accounts, actions)
        await self._update(topic, attributes={**topic.attributes, "Policy": policy})

    async def remove_permission(self, arn: str, label: str) -> None:
        topic = await self.topic(arn)
        policy = topics.without_permission(topic, label)
        await self._update(topic, attributes={**topic.attributes, "Policy": policy})

    async def _update(self, topic: Topic, *, attributes: Mapping[str, str]) -> None:
        try:
            await self.store.update_topic(topic.arn, attributes=attributes, tags=topic.tags)
        except NotFound:
            raise NotFound(TOPIC_NOT_FOUND) from None

    # --- tags -----------------------------------------------------------------------

    async def tags(self, arn: str) -> Mapping[str, str]:
        """ListTagsForResource. Raises ResourceNotFound."""
        return (await self._tagged(arn)).tags

    async def tag(self, arn: str, add: Mapping[str, str], remove: Sequence[str]) -> None:
        """TagResource, UntagResource. Raises ResourceNotFound, InvalidParameter,
        TagLimitExceeded."""
        topic = await self._tagged(arn)
        topics.check_tags(add, existing=topic.tags)
        tags = {k: v for k, v in {**topic.tags, **add}.items() if k not in remove}
        try:
            await self.store.update_topic(arn, attributes=topic.attributes, tags=tags)
        except NotFound:
            raise ResourceNotFound() from None

    async def _tagged(self, arn: str) -> Topic:
        topic = await self.store.get_topic(arn) if names.is_topic_arn(arn) else None
        if topic is None:
            raise ResourceNotFound()
        return topic

    # --- subscriptions --------------------------------------------------------------

    async def subscribe(
        self, topic_arn: str, protocol: str, endpoint: str,
        given: Mapping[str, str], owner: str, base_url: str = "",
    ) -> Subscription:
        """Subscribe: the new subscription (pending for HTTP/S and email, whose
        confirmation request is sent), or the existing one of the same endpoint when the
        attributes given match it. Raises NotFound, InvalidParameter."""
        topic = await self.topic(topic_arn)
        subscriptions.check(topic, protocol, endpoint, given)
        pending = subscriptions.needs_confirmation(protocol)
        candidate = Subscription(
            arn=f"{topic_arn}:{new_id()}", topic_arn=topic_arn, owner=owner,
            protocol=protocol, endpoint=endpoint, attributes=dict(given),
            confirmed=not pending, token=secrets.token_hex(64) if pending else None,
        )
        try:
            stored, created = await self.store.subscribe(candidate)
        except NotFound:
            raise NotFound(TOPIC_NOT_FOUND) from None
        if not created:
            subscriptions.same_subscription(stored, given)
        elif pending and self.on_pending is not None:
            self.on_pending(topic, stored, base_url)
        return stored

    async def confirm(self, topic_arn: str, token: str) -> Subscription:
        """ConfirmSubscription by the token sent to the endpoint. Raises NotFound,
        InvalidParameter."""
        await self.topic(topic_arn)
        subs = await self.store.list_subscriptions(topic_arn + ":", after=None, limit=10**9)
        for sub in subs:
            if sub.token is not None and secrets.compare_digest(sub.token, token):
                if sub.confirmed:
                    return sub
                return await self.store.update_subscription(
                    sub.arn, attributes=sub.attributes, confirmed=True
                )
        raise InvalidParameter("Invalid token")

    async def subscription(self, arn: str) -> Subscription:
        """The subscription of `arn`. Raises NotFound, InvalidParameter."""
        if names.topic_of_subscription(arn) is None:
            raise invalid("SubscriptionArn")
        sub = await self.store.get_subscription(arn)
        if sub is None:
            raise NotFound(SUBSCRIPTION_NOT_FOUND)
        return sub

    async def unsubscribe(self, arn: str) -> None:
        """Unsubscribe; one that is gone succeeds. Raises InvalidParameter."""
        if names.topic_of_subscription(arn) is None:
            raise invalid("SubscriptionArn")
        await self.store.unsubscribe(arn)

    async def set_subscription_attribute(self, arn: str, name: str, value: str) -> None:
        """SetSubscriptionAttributes. Raises NotFound, InvalidParameter."""
        sub = await self.subscription(arn)
        merged = {**sub.attributes, name: value}
        attributes.check_subscription(name, value, merged)
        if name == "RawMessageDelivery" and sub.protocol not in _RAW_PROTOCOLS:
            raise invalid(f"Attributes Reason: Delivery protocol [{sub.protocol}] does not "
                          "support raw message delivery.")
        try:
            await self.store.update_subscription(arn, attributes=merged,
                                                 confirmed=sub.confirmed)
        except NotFound:
            raise NotFound(SUBSCRIPTION_NOT_FOUND) from None

    async def list_subscriptions(self, region: str, account: str, token: str | None) -> Page:
        return await self._subscriptions(names.account_prefix(region, account), token)

    async def topic_subscriptions(self, topic_arn: str, token: str | None) -> Page:
        """ListSubscriptionsByTopic. Raises NotFound."""
        await self.topic(topic_arn)
        return await self._subscriptions(topic_arn + ":", token)

    async def _subscriptions(self, prefix: str, token: str | None) -> Page:
        found = await self.store.list_subscriptions(prefix, after=_after(token, prefix),
                                                    limit=PAGE_SIZE + 1)
        return _page(found, lambda sub: sub.arn)


def _after(token: str | None, prefix: str) -> str | None:
    """A NextToken is the last ARN of the page before; one that is not is refused."""
    if token is None:
        return None
    if not token.startswith(prefix):
        raise invalid("NextToken")
    return token


def _page(found: list, key: Callable) -> Page:  # type: ignore[type-arg]
    if len(found) > PAGE_SIZE:
        return Page(found[:PAGE_SIZE], key(found[PAGE_SIZE - 1]))
    return Page(found, None)


def pending_or_arn(sub: Subscription, return_arn: bool) -> str:
    """Subscribe's answer: the ARN, or "pending confirmation" for an unconfirmed one
    unless ReturnSubscriptionArn."""
    return sub.arn if sub.confirmed or return_arn else PENDING


__all__ = ["Page", "TopicService", "pending_or_arn"]
