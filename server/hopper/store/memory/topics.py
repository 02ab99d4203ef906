"""The in-memory topic store: the reference model of the TopicStore contract, and the
fan-out of a publish into this process's queues.

Everything lives in one process and every method runs without awaiting between its
reads and writes, so each is atomic on the event loop.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TypeVar

from hopper.core.errors import QueueError
from hopper.core.model import SendResult
from hopper.core.service import QueueService
from hopper.sns.errors import NotFound
from hopper.sns.model import Post, Subscription, Topic
from hopper.sns.store import QueueCopy, TopicStore

T = TypeVar("T")


class MemoryTopicStore:
    def __init__(self) -> None:
        self._topics: dict[str, Topic] = {}
        self._subscriptions: dict[str, Subscription] = {}
        self._key: bytes | None = None
        # The outbox: post id -> (post, leased until).
        self._posts: dict[str, tuple[Post, float]] = {}

    async def start(self) -> None:
        pass

    async def close(self) -> None:
        pass

    async def create_topic(self, topic: Topic) -> tuple[Topic, bool]:
        existing = self._topics.get(topic.arn)
        if existing is not None:
            return existing, False
        self._topics[topic.arn] = topic
        return topic, True

    async def get_topic(self, arn: str) -> Topic | None:
        return self._topics.get(arn)

    async def list_topics(self, prefix: str, *, after: str | None, limit: int) -> list[Topic]:
        return _page(self._topics, prefix, after, limit)

    async def update_topic(
        self, arn: str, *, attributes: Mapping[str, str], tags: Mapping[str, str]
    ) -> Topic:
        topic = self._topics.get(arn)
        if topic is None:
            raise NotFound("Topic does not exist")
        updated = dataclasses.replace(topic, attributes=dict(attributes), tags=dict(tags))
        self._topics[arn] = updated
        return updated

    async def delete_topic(self, arn: str) -> bool:
        for sub_arn in [a for a, s in self._subscriptions.items() if s.topic_arn == arn]:
            del self._subscriptions[sub_arn]
        return self._topics.pop(arn, None) is not None

    async def subscribe(self, subscription: Subscription) -> tuple[Subscription, bool]:
        if subscription.topic_arn not in self._topics:
            raise NotFound("Topic does not exist")
        for existing in self._subscriptions.values():
            if (existing.topic_arn, existing.protocol, existing.endpoint) == (
                subscription.topic_arn, subscription.protocol, subscription.endpoint
            ):
                return existing, False
        self._subscriptions[subscription.arn] = subscription
        return subscription, True

    async def get_subscription(self, arn: str) -> Subscription | None:
        return self._subscriptions.get(arn)

    async def update_subscription(
        self, arn: str, *, attributes: Mapping[str, str], confirmed: bool
    ) -> Subscription:
        sub = self._subscriptions.get(arn)
        if sub is None:
            raise NotFound("Subscription does not exist")
        updated = dataclasses.replace(sub, attributes=dict(attributes), confirmed=confirmed)
        self._subscriptions[arn] = updated
        return updated

    async def unsubscribe(self, arn: str) -> bool:
        return self._subscriptions.pop(arn, None) is not None

    async def list_subscriptions(
        self, prefix: str, *, after: str | None, limit: int
    ) -> list[Subscription]:
        return _page(self._subscriptions, prefix, after, limit)

    async def signing_key(self, candidate: bytes) -> bytes:
        if self._key is None:
            self._key = candidate
        return self._key


    async def add_posts(self, posts: Sequence[Post]) -> None:
        for post in posts:
            self._posts[post.id] = (post, 0.0)

    async def claim_posts(self, *, now: float, lease_until: float, limit: int) -> list[Post]:
        due = sorted((post for post, leased in self._posts.values()
                      if post.due_at <= now and leased <= now), key=lambda p: p.due_at)
        for post in due[:limit]:
            self._posts[post.id] = (post, lease_until)
        return due[:limit]

    async def finish_post(self, post_id: str) -> None:
        self._posts.pop(post_id, None)

    async def retry_post(self, post_id: str, *, attempts: int, due_at: float) -> None:
        found = self._posts.get(post_id)
        if found is not None:
            self._posts[post_id] = (
                dataclasses.replace(found[0], attempts=attempts, due_at=due_at), 0.0)


def _page(items: Mapping[str, T], prefix: str, after: str | None, limit: int) -> list[T]:
    arns = sorted(a for a in items if a.startswith(prefix) and (after is None or a > after))
    return [items[arn] for arn in arns[:limit]]


class ServiceFanout:
    """QueueFanout through the queue service itself, copy after copy (each wakes its
    queue's long polls), the posts kept by `topics` first. Atomic on the in-memory
    store, whose steps cannot fail half-way; not on JetStream (README, "SNS")."""

    def __init__(self, queues: QueueService, topics: TopicStore) -> None:
        self._queues = queues
        self._topics = topics

    async def deliver(
        self, copies: Sequence[QueueCopy], posts: Sequence[Post] = ()
    ) -> list[SendResult | QueueError]:
        if posts:
            await self._topics.add_posts(posts)
        results: list[SendResult | QueueError] = []
        for key, draft in copies:
            try:
                results.append(await self._queues.send(key, draft))
            except QueueError as error:
                results.append(error)
        return results
