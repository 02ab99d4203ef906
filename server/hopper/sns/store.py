"""The topic store seam: what every backend implements for SNS, drawn at intent.

The topic core owns it, as `hopper.core.store` is the queue core's. Topics are keyed
by ARN (which names account and region), subscriptions by ARN. A store raises only
`hopper.sns.errors.NotFound` where a method says so; foreign exceptions never escape.
The contract suite (tests/contract/test_topics.py) runs every store through these.

Delivery into queues is not here: it is `QueueFanout` (fan-out of one publish to the
subscribed queues, in one atomic step where the store can).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from hopper.core.errors import QueueError
from hopper.core.model import MessageDraft, QueueKey, SendResult
from hopper.sns.model import Post, Subscription, Topic

# One copy for one queue: where it goes and what it is.
QueueCopy = tuple[QueueKey, MessageDraft]


class TopicStore(Protocol):
    async def start(self) -> None:
        """Open connections (the queue store's own are not shared)."""
        ...

    async def close(self) -> None:
        """Release every connection. Idempotent."""
        ...

    async def create_topic(self, topic: Topic) -> tuple[Topic, bool]:
        """Create the topic unless one of its ARN exists: (the stored topic, created).
        Atomic under concurrency: two creates of one ARN store one topic."""
        ...

    async def get_topic(self, arn: str) -> Topic | None:
        ...

    async def list_topics(self, prefix: str, *, after: str | None, limit: int) -> list[Topic]:
        """Topics whose ARN starts with `prefix` (`arn:aws:sns:<region>:<account>:`),
        by ARN, ARN > `after` when given, at most `limit`."""
        ...

    async def update_topic(
        self, arn: str, *, attributes: Mapping[str, str], tags: Mapping[str, str]
    ) -> Topic:
        """Replace the topic's attributes and tags. Raises NotFound."""
        ...

    async def delete_topic(self, arn: str) -> bool:
        """Delete the topic and every subscription of it; False when there was none."""
        ...

    async def subscribe(self, subscription: Subscription) -> tuple[Subscription, bool]:
        """Store the subscription unless its topic already has one of the same protocol
        and endpoint: (the stored subscription, created). Raises NotFound when the topic
        does not exist. Atomic under concurrency."""
        ...

    async def get_subscription(self, arn: str) -> Subscription | None:
        ...

    async def update_subscription(
        self, arn: str, *, attributes: Mapping[str, str], confirmed: bool
    ) -> Subscription:
        """Replace the subscription's attributes and confirmed flag. Raises NotFound."""
        ...

    async def unsubscribe(self, arn: str) -> bool:
        """Delete the subscription; False when there was none."""
        ...

    async def list_subscriptions(
        self, prefix: str, *, after: str | None, limit: int
    ) -> list[Subscription]:
        """Subscriptions whose ARN starts with `prefix` (a topic's ARN and `:` for one
        topic's, `arn:aws:sns:<region>:<account>:` for an account's), by ARN."""
        ...

    async def signing_key(self, candidate: bytes) -> bytes:
        """The PEM private key every server over this store signs with: the stored
        one, or `candidate`, stored, when there is none yet (the first server's)."""
        ...

    # --- the outbox of HTTP/S notifications ------------------------------------------

    async def add_posts(self, posts: Sequence[Post]) -> None:
        """Keep `posts` until finished (see also QueueFanout.deliver)."""
        ...

    async def claim_posts(self, *, now: float, lease_until: float, limit: int) -> list[Post]:
        """Up to `limit` posts due by `now` and not leased past `now`, oldest due first,
        each leased until `lease_until`: two concurrent claims (any processes) never
        take the same post while its lease runs."""
        ...

    async def finish_post(self, post_id: str) -> None:
        """Forget the post (delivered, or given up). Idempotent."""
        ...

    async def retry_post(self, post_id: str, *, attempts: int, due_at: float) -> None:
        """Record a failed attempt: the post is due again at `due_at`, unleased."""
        ...


class QueueFanout(Protocol):
    async def deliver(
        self, copies: Sequence[QueueCopy], posts: Sequence[Post] = ()
    ) -> list[SendResult | QueueError]:
        """Enqueue each copy into its queue under SQS's send rules, and keep `posts` in
        the topic store's outbox, all in one atomic step where the store can
        (PostgreSQL: one transaction; a store that cannot says so): one result per
        copy, in order, a QueueError (QueueNotFound, the queue's refusals) for a copy
        that was not enqueued. A refused copy never undoes the others."""
        ...
