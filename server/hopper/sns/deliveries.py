"""Publish and PublishBatch: a publication's copies for every subscription whose
filter policy it passes, queues' copies enqueued together through `QueueFanout` (one
transaction on PostgreSQL), HTTP/S copies handed to `HttpDeliveries`, the others
recorded. A copy a queue refuses (the queue is gone, the message breaks its rules)
goes to the subscription's dead-letter queue when it has one (RedrivePolicy).
"""

from __future__ import annotations

import functools
import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from hopper.core.errors import QueueError
from hopper.core.ids import new_id
from hopper.core.model import MessageDraft
from hopper.sns import attributes, envelopes, filter_matching, filter_policies, publishing
from hopper.sns.envelopes import Addresses
from hopper.sns.errors import TopicError
from hopper.sns.model import Post, Publication, Sent, Subscription, Topic
from hopper.sns.publishing import PublishDraft
from hopper.sns.service import QueueResolver, TopicService
from hopper.sns.signing import Signer, new_key
from hopper.sns.store import QueueCopy, QueueFanout

# Subscribers that get the message's text, never the envelope.
_TEXT_PROTOCOLS = frozenset({"sms", "email"})
# How many recorded sends (email, SMS, ...) a server keeps for tests to read.
MAX_RECORDED = 10_000


class TopicEvents(Protocol):
    """What metrics hear: per topic ARN, publications, and copies delivered or failed
    by protocol (a failed copy may still reach its dead-letter queue)."""

    def published(self, topic_arn: str, count: int) -> None: ...

    def delivered(self, topic_arn: str, protocol: str) -> None: ...

    def failed(self, topic_arn: str, protocol: str) -> None: ...


class NoTopicEvents:
    def published(self, topic_arn: str, count: int) -> None:
        pass

    def delivered(self, topic_arn: str, protocol: str) -> None:
        pass

    def failed(self, topic_arn: str, protocol: str) -> None:
        pass


@dataclass(frozen=True)
class Copy:
    """One subscriber's copy of one publication."""

    subscription: Subscription
    publication: Publication
    draft: MessageDraft


class Deliveries:
    def __init__(
        self, service: TopicService, fanout: QueueFanout, queue_key: QueueResolver
    ) -> None:
        self.service = service
        self.fanout = fanout
        self.queue_key = queue_key
        self.signer: Signer | None = None
        self.http: HttpSink | None = None
        self.recorded: list[Sent] = []
        # Hears of publications, copies delivered and copies that failed (metrics).
        self.events: TopicEvents = NoTopicEvents()
        # FIFO sequence numbers: increasing in this process (time-based, so across a
        # restart too); a queue's own sequence numbers order what it holds.
        self._sequence = itertools.count(time.time_ns())

    async def start(self) -> None:
        """Load (or, the first time, make and store) the signing key."""
        self.signer = Signer(await self.service.store.signing_key(new_key()))

    async def publish(self, arn: str, draft: PublishDraft, addresses: Addresses) -> Publication:
        """Publish. Raises NotFound, InvalidParameter, InvalidParameterValue."""
        topic = await self.service.topic(arn)
        publication = self._prepare(topic, draft)
        await self._fan_out(topic, [publication], addresses)
        return publication

    async def publish_batch(
        self, arn: str, entries: Sequence[tuple[str, PublishDraft]], addresses: Addresses
    ) -> list[Publication | TopicError]:
        """PublishBatch: one result per entry, in order. Raises (for the whole call)
        NotFound, BatchError."""
        topic = await self.service.topic(arn)
        publishing.check_batch([entry_id for entry_id, _ in entries],
                               [draft for _, draft in entries])
        results: list[Publication | TopicError] = []
        for _, draft in entries:
            try:
                results.append(self._prepare(topic, draft))
            except TopicError as error:
                results.append(error)
        valid = [r for r in results if isinstance(r, Publication)]
        if valid:
            await self._fan_out(topic, valid, addresses)
        return results

    def _prepare(self, topic: Topic, draft: PublishDraft) -> Publication:
        publication = publishing.prepare(topic, draft, new_id(), self.service.clock.time())
        if topic.fifo:
            publication = _numbered(publication, next(self._sequence))
        return publication

    async def _fan_out(
        self, topic: Topic, publications: Sequence[Publication], addresses: Addresses
    ) -> None:
        subs = await self.service.store.list_subscriptions(
            topic.arn + ":", after=None, limit=10**9
        )
        live = [sub for sub in subs if sub.confirmed]
        queued: list[Copy] = []
        posts: list[Post] = []
        for publication in publications:
            for sub in live:
                if passes(sub, publication):
                    self._route(topic, sub, publication, addresses, (queued, posts))
        self.events.published(topic.arn, len(publications))
        await self._enqueue(queued, posts)
        if posts and self.http is not None:
            self.http.wake()

    def _route(self, topic: Topic, sub: Subscription, publication: Publication,
               addresses: Addresses, into: tuple[list[Copy], list[Post]]) -> None:
        body = self.body(topic, sub, publication, addresses)
        if sub.protocol == "sqs":
            into[0].append(Copy(sub, publication, _queue_draft(sub, publication, body)))
        elif sub.protocol in ("http", "https"):
            into[1].append(notification_post(sub, publication, body,
                                             self.service.clock.time()))
        else:
            self.events.delivered(topic.arn, sub.protocol)
            if len(self.recorded) >= MAX_RECORDED:
                del self.recorded[: MAX_RECORDED // 2]
            self.recorded.append(Sent(sub.arn, sub.protocol, sub.endpoint, body))

    def body(self, topic: Topic, sub: Subscription, publication: Publication,
             addresses: Addresses) -> str:
        """What the subscriber receives: the message (raw delivery; SMS and email
        carry the text alone), or its signed envelope."""
        if attributes.raw_delivery(sub) or sub.protocol in _TEXT_PROTOCOLS:
            return publication.text_for(sub.protocol)
        assert self.signer is not None, "Deliveries.start() loads the signing key"
        version = topic.attributes.get("SignatureVersion", "1")
        envelope = envelopes.notification(
            publication, sub.protocol, sub.arn, self.signer, addresses, version
        )
        return envelopes.dumps(envelope)

    async def _enqueue(self, copies: Sequence[Copy], posts: Sequence[Post]) -> None:
        placed = [(copy, self.queue_key(copy.subscription.endpoint)) for copy in copies]
        sendable = [(copy, key) for copy, key in placed if key is not None]
        results = await self.fanout.deliver([(key, copy.draft) for copy, key in sendable],
                                            posts)
        failed = [copy for copy, key in placed if key is None]
        for (copy, _), result in zip(sendable, results, strict=True):
            if isinstance(result, QueueError):
                failed.append(copy)
            else:
                self.events.delivered(copy.publication.topic_arn, "sqs")
        await self.dead_letter(failed)

    async def dead_letter(self, failed: Sequence[Copy]) -> None:
        """Send each failed copy to its subscription's dead-letter queue, if any."""
        dead: list[QueueCopy] = []
        for copy in failed:
            self.events.failed(copy.publication.topic_arn, copy.subscription.protocol)
            policy = copy.subscription.attributes.get("RedrivePolicy")
            key = self.queue_key(attributes.dead_letter_target(policy)) if policy else None
            if key is not None:
                dead.append((key, copy.draft))
        if not dead:
            return
        results = await self.fanout.deliver(dead)
        # A copy the dead-letter queue refuses too (as it holds at most 10 attributes,
        # say) goes there as its body alone rather than be lost.
        bare = [(key, MessageDraft(body=draft.body, group_id=draft.group_id,
                                   deduplication_id=draft.deduplication_id))
                for (key, draft), result in zip(dead, results, strict=True)
                if isinstance(result, QueueError) and draft.attributes]
        if bare:
            await self.fanout.deliver(bare)


class HttpSink(Protocol):
    """What delivers the outbox's posts (sns_http.HttpDeliveries)."""

    def wake(self) -> None:
        """New posts are due: look now rather than at the next poll."""


def notification_post(sub: Subscription, publication: Publication, body: str,
                      now: float) -> Post:
    """The POST of one notification, with SNS's headers."""
    headers = {
        "x-amz-sns-message-type": "Notification",
        "x-amz-sns-message-id": publication.id,
        "x-amz-sns-topic-arn": publication.topic_arn,
        "x-amz-sns-subscription-arn": sub.arn,
    }
    if attributes.raw_delivery(sub):
        headers["x-amz-sns-rawdelivery"] = "true"
    return Post(new_id(), sub.arn, publication.topic_arn, sub.endpoint, headers, body,
                due_at=now)


def passes(sub: Subscription, publication: Publication) -> bool:
    """Whether `publication` passes the subscription's filter policy (or it has none)."""
    text = sub.attributes.get("FilterPolicy", "")
    if not text:
        return True
    body_scope = sub.attributes.get("FilterPolicyScope") == "MessageBody"
    policy = _policy(text, body_scope)
    if policy is None:
        return True
    if body_scope:
        return filter_matching.matches_body(policy, publication.message)
    return filter_matching.matches_attributes(policy, publication.attributes)


@functools.lru_cache(maxsize=1024)
def _policy(text: str, body_scope: bool) -> filter_policies.Policy | None:
    return filter_policies.read(text, body_scope=body_scope)


def _queue_draft(sub: Subscription, publication: Publication, body: str) -> MessageDraft:
    # Raw delivery carries the attributes as the queue's message attributes; the
    # envelope carries them inside itself.
    raw = attributes.raw_delivery(sub)
    return MessageDraft(
        body=body,
        attributes=publication.attributes if raw else {},
        group_id=publication.group_id,
        deduplication_id=publication.deduplication_id,
    )


def _numbered(publication: Publication, sequence: int) -> Publication:
    from dataclasses import replace

    return replace(publication, sequence_number=sequence)
