"""HTTP/S subscribers: the SubscriptionConfirmation POSTed to a new subscription, and
every notification POSTed with SNS's headers, retried under the delivery policy
(sns/delivery_policies.py: its phases, jittered) on a 5xx, a 429 or no answer, then
sent to the subscription's dead-letter queue. A 2xx delivers; another status is a
client error, not retried (as SNS does), and dead-lettered.

Notifications wait in the topic store's outbox (TopicStore.add_posts: on PostgreSQL in
the publish's own transaction), so they survive a restart where the store does.
Confirmation requests are sent once, from this process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from collections.abc import Coroutine, Mapping
from typing import Any
from urllib.parse import urlsplit

from hopper.core.ids import new_id
from hopper.core.model import MessageDraft
from hopper.sns import delivery_policies, envelopes
from hopper.sns.deliveries import Copy, Deliveries
from hopper.sns.envelopes import Addresses
from hopper.sns.model import Post, Publication, Sent, Subscription, Topic
from hopper.sns.service import TopicService

log = logging.getLogger("hopper.sns.http")
# AWS waits 15 seconds for an endpoint's answer.
ATTEMPT_SECONDS = 15.0
# A claimed post is this server's for one attempt; a post whose server died is due
# again once its lease ends.
LEASE_SECONDS = ATTEMPT_SECONDS + 15.0
# How often the outbox is looked at when no publish of this server woke it (posts of
# other servers, retries coming due).
POLL_SECONDS = 0.5
CLAIM_LIMIT = 100
USER_AGENT = "Amazon Simple Notification Service Agent"


class HttpDeliveries:
    """Delivers the topic store's outbox: claims due posts (a lease per attempt, so
    several servers share the work and a post of a dead server is taken up again),
    POSTs them, and finishes, reschedules or dead-letters each."""

    def __init__(self, topics: TopicService, deliveries: Deliveries) -> None:
        self._topics = topics
        self._deliveries = deliveries
        self._tasks: set[asyncio.Task[None]] = set()
        self._due = asyncio.Event()
        self._loop: asyncio.Task[None] | None = None

    def wake(self) -> None:
        self._due.set()

    def start(self) -> None:
        self._loop = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while True:
            try:
                await self._round()
            except Exception:  # noqa: BLE001 - a store fault: the next round tries again
                log.exception("hopper: the SNS outbox round failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._due.wait(), POLL_SECONDS)
            self._due.clear()

    async def _round(self) -> None:
        now = self._topics.clock.time()
        posts = await self._topics.store.claim_posts(
            now=now, lease_until=now + LEASE_SECONDS, limit=CLAIM_LIMIT
        )
        for post in posts:
            self._spawn(self._attempt(post))

    async def _attempt(self, post: Post) -> None:
        status = await send(post.url, post.headers, post.body)
        store = self._topics.store
        if status is not None and 200 <= status < 300:
            self._deliveries.events.delivered(post.topic_arn, _protocol(post.url))
            await store.finish_post(post.id)
            return
        sub = await store.get_subscription(post.subscription_arn)
        topic = await store.get_topic(post.topic_arn)
        if sub is None or topic is None:  # unsubscribed meanwhile: nobody to deliver to
            await store.finish_post(post.id)
            return
        policy = delivery_policies.policy_of(
            sub.attributes.get("DeliveryPolicy"), topic.attributes.get("DeliveryPolicy")
        )
        retryable = status is None or status >= 500 or status == 429
        if retryable and post.attempts < policy.num_retries:
            delay = delivery_policies.delay(policy, post.attempts + 1)
            await store.retry_post(post.id, attempts=post.attempts + 1,
                                   due_at=self._topics.clock.time() + delay)
            return
        await self._give_up(post, sub)

    async def _give_up(self, post: Post, sub: Subscription) -> None:
        # A client error, or the retries ran out: the subscription's dead-letter queue.
        publication = Publication(post.headers.get("x-amz-sns-message-id", post.id),
                                  post.topic_arn, post.body, 0.0)
        await self._deliveries.dead_letter([Copy(sub, publication,
                                                 MessageDraft(body=post.body))])
        await self._topics.store.finish_post(post.id)

    def confirm(self, topic: Topic, sub: Subscription, base_url: str) -> None:
        """Send a pending subscription its confirmation request (HTTP/S) or record it
        (email)."""
        signer = self._deliveries.signer
        assert signer is not None, "Deliveries.start() loads the signing key"
        envelope = envelopes.confirmation(
            topic.arn, sub.token or "", new_id(), self._topics.clock.time(), signer,
            Addresses(base_url), topic.attributes.get("SignatureVersion", "1"),
        )
        body = envelopes.dumps(envelope)
        if sub.protocol not in ("http", "https"):
            self._deliveries.recorded.append(Sent(sub.arn, sub.protocol, sub.endpoint, body))
            return
        headers = {
            "x-amz-sns-message-type": "SubscriptionConfirmation",
            "x-amz-sns-message-id": str(envelope["MessageId"]),
            "x-amz-sns-topic-arn": topic.arn,
        }
        self._spawn(self._post_once(sub.endpoint, headers, body))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _post_once(self, url: str, headers: Mapping[str, str], body: str) -> None:
        status = await send(url, headers, body)
        if status is None or status >= 300:
            log.warning("hopper: confirmation request to %s answered %s", url, status)

    async def close(self) -> None:
        if self._loop is not None:
            self._loop.cancel()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=2.0)


async def send(url: str, headers: Mapping[str, str], body: str) -> int | None:
    """POST `body` to `url`: the answer's status, or None when none came in time."""
    try:
        return await asyncio.wait_for(_post(url, headers, body), ATTEMPT_SECONDS)
    except (TimeoutError, OSError, ValueError, ssl.SSLError):
        return None


async def _post(url: str, headers: Mapping[str, str], body: str) -> int:
    parts = urlsplit(url)
    secure = parts.scheme == "https"
    port = parts.port or (443 if secure else 80)
    context = ssl.create_default_context() if secure else None
    reader, writer = await asyncio.open_connection(parts.hostname, port, ssl=context)
    try:
        payload = body.encode("utf-8")
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        lines = [f"POST {target} HTTP/1.1", f"Host: {parts.netloc}",
                 "Content-Type: text/plain; charset=UTF-8", f"User-Agent: {USER_AGENT}",
                 f"Content-Length: {len(payload)}", "Connection: close"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload)
        await writer.drain()
        status_line = await reader.readline()
        return int(status_line.split()[1])
    finally:
        writer.close()


def _protocol(url: str) -> str:
    return "https" if url.lower().startswith("https:") else "http"


def attach(topics: TopicService, deliveries: Deliveries) -> HttpDeliveries:
    http = HttpDeliveries(topics, deliveries)
    deliveries.http = http
    topics.on_pending = http.confirm
    return http
