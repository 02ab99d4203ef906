"""PostgresTopicStore: the TopicStore contract on PostgreSQL, and the fan-out of a
publish into every subscribed queue in one transaction.

The fan-out (fanout.py) checks each copy by the queue core's own rule for SendMessage
and enqueues all of them on one connection inside one transaction, with the wake-ups
as `pg_notify` in it, which PostgreSQL delivers at commit. So a publish that answered
200 has its copy in every subscribed queue, and one that failed (the server killed
mid-way, the database gone) has none anywhere.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

import asyncpg

from hopper.core.errors import QueueError
from hopper.core.model import SendResult
from hopper.sns.errors import NotFound
from hopper.sns.model import Post, Subscription, Topic
from hopper.sns.store import QueueCopy
from hopper.store.postgres import fanout
from hopper.store.postgres.failures import translated
from hopper.store.postgres.pool import open_pool
from hopper.store.postgres.schema import checked_schema, named_blocks


@cache
def statements() -> dict[str, str]:
    text = (resources.files("hopper.store.postgres") / "sql" / "topics.sql").read_text()
    return named_blocks(text)


class PostgresTopicStore:
    def __init__(self, dsn: str, *, schema: str = "hopper", max_size: int = 8) -> None:
        self._dsn = dsn
        self._schema = checked_schema(schema)
        self._max_size = max_size
        self._pool: asyncpg.Pool | None = None
        self._sql = statements()

    async def start(self) -> None:
        self._pool = await open_pool(self._dsn, self._schema, min_size=1,
                                     max_size=self._max_size)

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()
            self._pool = None

    @property
    def pool(self) -> asyncpg.Pool:
        assert self._pool is not None, "PostgresTopicStore.start() opens the pool"
        return self._pool

    async def _fetch(self, name: str, *args: Any) -> list[asyncpg.Record]:
        with translated():
            return list(await self.pool.fetch(self._sql[name], *args))

    async def create_topic(self, topic: Topic) -> tuple[Topic, bool]:
        for _ in range(3):
            rows = await self._fetch("create_topic", topic.arn, dict(topic.attributes),
                                     dict(topic.tags))
            if rows:
                return _topic(rows[0]), rows[0]["created"]
        # Created and deleted by others between our statements, three times over.
        raise NotFound("Topic does not exist")

    async def get_topic(self, arn: str) -> Topic | None:
        rows = await self._fetch("get_topic", arn)
        return _topic(rows[0]) if rows else None

    async def list_topics(self, prefix: str, *, after: str | None, limit: int) -> list[Topic]:
        return [_topic(row) for row in await self._fetch("list_topics", prefix, after, limit)]

    async def update_topic(
        self, arn: str, *, attributes: Mapping[str, str], tags: Mapping[str, str]
    ) -> Topic:
        rows = await self._fetch("update_topic", arn, dict(attributes), dict(tags))
        if not rows:
            raise NotFound("Topic does not exist")
        return _topic(rows[0])

    async def delete_topic(self, arn: str) -> bool:
        return bool(await self._fetch("delete_topic", arn))

    async def subscribe(self, subscription: Subscription) -> tuple[Subscription, bool]:
        s = subscription
        for _ in range(3):
            rows = await self._fetch(
                "subscribe", s.arn, s.topic_arn, s.owner, s.protocol, s.endpoint,
                dict(s.attributes), s.confirmed, s.token,
            )
            if rows:
                return _subscription(rows[0]), rows[0]["created"]
            if await self.get_topic(s.topic_arn) is None:
                raise NotFound("Topic does not exist")
            # A concurrent subscribe of the same endpoint committed after this
            # statement's snapshot: the next one sees it.
        raise NotFound("Topic does not exist")

    async def get_subscription(self, arn: str) -> Subscription | None:
        rows = await self._fetch("get_subscription", arn)
        return _subscription(rows[0]) if rows else None

    async def update_subscription(
        self, arn: str, *, attributes: Mapping[str, str], confirmed: bool
    ) -> Subscription:
        rows = await self._fetch("update_subscription", arn, dict(attributes), confirmed)
        if not rows:
            raise NotFound("Subscription does not exist")
        return _subscription(rows[0])

    async def unsubscribe(self, arn: str) -> bool:
        return bool(await self._fetch("unsubscribe", arn))

    async def list_subscriptions(
        self, prefix: str, *, after: str | None, limit: int
    ) -> list[Subscription]:
        rows = await self._fetch("list_subscriptions", prefix, after, limit)
        return [_subscription(row) for row in rows]

    async def signing_key(self, candidate: bytes) -> bytes:
        rows = await self._fetch("signing_key", candidate)
        return bytes(rows[0]["pem"])

    # --- QueueFanout --------------------------------------------------------------

    async def deliver(
        self, copies: Sequence[QueueCopy], posts: Sequence[Post] = ()
    ) -> list[SendResult | QueueError]:
        """Every copy under SendMessage's rules, and the posts, in one transaction
        (fanout.py)."""
        if not copies and not posts:
            return []
        with translated():
            async with self.pool.acquire() as connection, connection.transaction():
                if posts:
                    await connection.execute(self._sql["add_posts"], _posts_json(posts))
                return await fanout.deliver(connection, self._schema, copies)

    async def add_posts(self, posts: Sequence[Post]) -> None:
        if posts:
            await self._fetch("add_posts", _posts_json(posts))

    async def claim_posts(self, *, now: float, lease_until: float, limit: int) -> list[Post]:
        rows = await self._fetch("claim_posts", now, lease_until, limit)
        return sorted((_post(row) for row in rows), key=lambda post: post.due_at)

    async def finish_post(self, post_id: str) -> None:
        await self._fetch("finish_post", post_id)

    async def retry_post(self, post_id: str, *, attempts: int, due_at: float) -> None:
        await self._fetch("retry_post", post_id, attempts, due_at)


def _posts_json(posts: Sequence[Post]) -> list[dict[str, Any]]:
    return [{"id": p.id, "subscription_arn": p.subscription_arn, "topic_arn": p.topic_arn,
             "url": p.url, "headers": dict(p.headers), "body": p.body,
             "attempts": p.attempts, "due_at": p.due_at} for p in posts]


def _post(row: asyncpg.Record) -> Post:
    return Post(row["id"], row["subscription_arn"], row["topic_arn"], row["url"],
                dict(row["headers"]), row["body"], row["attempts"], row["due_at"])


def _topic(row: asyncpg.Record) -> Topic:
    return Topic(row["arn"], dict(row["attributes"]), dict(row["tags"]))


def _subscription(row: asyncpg.Record) -> Subscription:
    return Subscription(
        arn=row["arn"], topic_arn=row["topic_arn"], owner=row["owner"],
        protocol=row["protocol"], endpoint=row["endpoint"],
        attributes=dict(row["attributes"]), confirmed=row["confirmed"], token=row["token"],
    )
