"""HTTP/S subscribers: the SubscriptionConfirmation POSTed to a new subscription, and
every notification POSTed with SNS's headers, retried under the delivery policy
(sns/delivery_policies.py: its phases, jittered) on a 5xx, a 429 or no answer, then
sent to the subscription's dead-letter queue. A 2xx delivers; another status is a
client error, not retried (as SNS does), and dead-lettered.

Deliveries in flight live in this process: a server that stops drops its retries (on
every store; see the README's SNS section).
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import Mapping
from urllib.parse import urlsplit

from hopper.core.ids import new_id
from hopper.core.model import MessageDraft
from hopper.sns import delivery_policies, envelopes
from hopper.sns.deliveries import Copy, Deliveries, HttpSink
from hopper.sns.envelopes import Addresses
from hopper.sns.model import Publication, Sent, Subscription, Topic
from hopper.sns.service import TopicService

log = logging.getLogger("hopper.sns.http")
# AWS waits 15 seconds for an endpoint's answer.
ATTEMPT_SECONDS = 15.0
USER_AGENT = "Amazon Simple Notification Service Agent"


class HttpDeliveries(HttpSink):
    def __init__(self, topics: TopicService, deliveries: Deliveries) -> None:
        self._topics = topics
        self._deliveries = deliveries
        self._tasks: set[asyncio.Task[None]] = set()

    def notify(self, topic: Topic, sub: Subscription, publication: Publication,
               body: str) -> None:
        headers = {
            "x-amz-sns-message-type": "Notification",
            "x-amz-sns-message-id": publication.id,
            "x-amz-sns-topic-arn": topic.arn,
            "x-amz-sns-subscription-arn": sub.arn,
        }
        if sub.attributes.get("RawMessageDelivery", "").lower() == "true":
            headers["x-amz-sns-rawdelivery"] = "true"
        policy = delivery_policies.policy_of(
            sub.attributes.get("DeliveryPolicy"), topic.attributes.get("DeliveryPolicy")
        )
        copy = Copy(sub, publication, MessageDraft(body=body))
        self._spawn(self._deliver(copy, headers, policy))

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

    def _spawn(self, work: object) -> None:
        task = asyncio.get_running_loop().create_task(work)  # type: ignore[arg-type]
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _deliver(self, copy: Copy, headers: Mapping[str, str],
                       policy: delivery_policies.RetryPolicy) -> None:
        arn = copy.publication.topic_arn
        for attempt in range(policy.num_retries + 1):
            if attempt:
                await asyncio.sleep(delivery_policies.delay(policy, attempt))
            status = await post(copy.subscription.endpoint, headers, copy.draft.body)
            if status is not None and 200 <= status < 300:
                self._deliveries.events.delivered(arn, copy.subscription.protocol)
                return
            if status is not None and status < 500 and status != 429:
                break  # a client error: SNS does not retry it
        await self._deliveries.dead_letter([copy])

    async def _post_once(self, url: str, headers: Mapping[str, str], body: str) -> None:
        status = await post(url, headers, body)
        if status is None or status >= 300:
            log.warning("hopper: confirmation request to %s answered %s", url, status)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=2.0)


async def post(url: str, headers: Mapping[str, str], body: str) -> int | None:
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


def attach(topics: TopicService, deliveries: Deliveries) -> HttpDeliveries:
    http = HttpDeliveries(topics, deliveries)
    deliveries.http = http
    topics.on_pending = http.confirm
    return http
