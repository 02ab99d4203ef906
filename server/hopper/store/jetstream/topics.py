"""JetStreamTopicStore: the TopicStore contract on a NATS JetStream key-value bucket,
`<prefix>_topics`. Depends on nats-py and the core only (not on the queue store's
modules), so the queue store can change under it.

Keys (KV keys allow no `:`, so ARNs are hex-encoded): `t.<arn>` a topic (its
attributes and tags, JSON), `s.<arn>` a subscription, `u.<topic|protocol|endpoint>`
the claim that makes one subscription per topic, protocol and endpoint (created with
create-if-absent, so two servers subscribing one endpoint at once store one), and
`key` the signing key, `p.<id>` a post of the outbox (claimed by
compare-and-set). Creation is create-if-absent, changes are compare-and-set on
the revision read, so each method is atomic across processes. Deleting a topic deletes
its subscriptions one by one after it: a server that dies between leaves
subscriptions of no topic, which no publish reaches and listings skip.

Fan-out on this store is the queue service's, copy after copy (store/memory/topics.py
ServiceFanout): JetStream has no transaction over several queues' ledgers.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

import nats
from nats.js.api import KeyValueConfig, StorageType
from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError

from hopper.core.errors import StoreUnavailable
from hopper.sns.errors import NotFound
from hopper.sns.model import Post, Subscription, Topic

log = logging.getLogger("hopper.jetstream")

_CAS_ATTEMPTS = 20
# How long closing the connection may take at shutdown.
CLOSE_SECONDS = 5.0
_ERRORS = (nats.errors.Error, OSError, TimeoutError)


def _hex(text: str) -> str:
    return text.encode("utf-8").hex()


def _unhex(key: str) -> str:
    return bytes.fromhex(key.split(".", 1)[1]).decode("utf-8")


class JetStreamTopicStore:
    def __init__(self, urls: Sequence[str], *, replicas: int = 1, prefix: str = "hopper") -> None:
        self._urls = list(urls)
        self._replicas = replicas
        self._prefix = prefix
        self._nc: Any = None
        self._kv: Any = None
        self._js: Any = None

    async def start(self) -> None:
        try:
            self._nc = await nats.connect(servers=self._urls, connect_timeout=2)
            js = self._js = self._nc.jetstream(timeout=5.0)
            self._kv = await js.create_key_value(KeyValueConfig(
                bucket=f"{self._prefix}_topics", history=1, replicas=self._replicas,
                # No direct gets: a follower may answer those from behind (as the queue
                # store's buckets, store/jetstream/edge.py).
                storage=StorageType.FILE, direct=False,
            ))
        except _ERRORS as error:
            raise StoreUnavailable(f"JetStream: {type(error).__name__}: {error}") from error

    async def close(self) -> None:
        nc, self._nc = self._nc, None
        if nc is None:
            return
        try:
            # Bounded, as the queue store's: a shutdown must not wait on a connection
            # that is reconnecting or a node that stopped answering.
            async with asyncio.timeout(CLOSE_SECONDS):
                await nc.close()
        except Exception as error:  # closing a lost connection may fail; it is gone
            log.debug("hopper: closing the JetStream topic store: %s", error)

    async def _get(self, key: str) -> tuple[dict[str, Any], int] | None:
        try:
            entry = await self._kv.get(key)
        except KeyNotFoundError:
            return None
        except _ERRORS as error:
            raise StoreUnavailable(str(error)) from error
        if entry.value is None or entry.operation is not None:
            return None
        return json.loads(entry.value), entry.revision

    async def _create(self, key: str, value: Mapping[str, Any]) -> bool:
        try:
            await self._kv.create(key, json.dumps(value).encode())
            return True
        except KeyWrongLastSequenceError:
            return False
        except _ERRORS as error:
            raise StoreUnavailable(str(error)) from error

    async def _keys(self, kind: str) -> list[str]:
        """The keys of `kind` ("t", "s", "p"), deleted ones included (their gets find
        nothing). Read from the stream's own subject list, which the stream's leader
        answers: the bucket's key watcher (`kv.keys()`) was seen to miss a key put just
        before."""
        bucket = f"{self._prefix}_topics"
        subjects = f"$KV.{bucket}.{kind}.>"
        try:
            info = await self._js.stream_info(f"KV_{bucket}", subjects_filter=subjects)
        except _ERRORS as error:
            raise StoreUnavailable(str(error)) from error
        found = info.state.subjects or {}
        return [subject.split(".", 2)[2] for subject in found]

    async def _delete(self, key: str) -> None:
        try:
            await self._kv.delete(key)
        except _ERRORS as error:
            raise StoreUnavailable(str(error)) from error

    async def create_topic(self, topic: Topic) -> tuple[Topic, bool]:
        for _ in range(_CAS_ATTEMPTS):
            if await self._create("t." + _hex(topic.arn), _topic_json(topic)):
                return topic, True
            existing = await self.get_topic(topic.arn)
            if existing is not None:
                return existing, False
        raise StoreUnavailable("the topic kept changing under a create")

    async def get_topic(self, arn: str) -> Topic | None:
        found = await self._get("t." + _hex(arn))
        return None if found is None else _topic(arn, found[0])

    async def list_topics(self, prefix: str, *, after: str | None, limit: int) -> list[Topic]:
        arns = _page([_unhex(k) for k in await self._keys("t")], prefix, after)
        topics = [await self.get_topic(arn) for arn in arns[: limit + 5]]
        return [t for t in topics if t is not None][:limit]

    async def update_topic(
        self, arn: str, *, attributes: Mapping[str, str], tags: Mapping[str, str]
    ) -> Topic:
        topic = Topic(arn, dict(attributes), dict(tags))
        await self._replace("t." + _hex(arn), _topic_json(topic), "Topic does not exist")
        return topic

    async def _replace(self, key: str, value: Mapping[str, Any], missing: str) -> None:
        for _ in range(_CAS_ATTEMPTS):
            found = await self._get(key)
            if found is None:
                raise NotFound(missing)
            try:
                await self._kv.update(key, json.dumps(value).encode(), last=found[1])
                return
            except KeyWrongLastSequenceError:
                continue
            except _ERRORS as error:
                raise StoreUnavailable(str(error)) from error
        raise StoreUnavailable("the record kept changing under an update")

    async def delete_topic(self, arn: str) -> bool:
        existed = await self.get_topic(arn) is not None
        await self._delete("t." + _hex(arn))
        for sub in await self._all_subscriptions(arn + ":"):
            await self.unsubscribe(sub.arn)
        return existed

    async def subscribe(self, subscription: Subscription) -> tuple[Subscription, bool]:
        s = subscription
        if await self.get_topic(s.topic_arn) is None:
            raise NotFound("Topic does not exist")
        claim = "u." + _hex(f"{s.topic_arn}|{s.protocol}|{s.endpoint}")
        for _ in range(_CAS_ATTEMPTS):
            if await self._create(claim, {"arn": s.arn}):
                await self._kv.put("s." + _hex(s.arn), json.dumps(_sub_json(s)).encode())
                return s, True
            holder = await self._get(claim)
            if holder is not None:
                existing = await self.get_subscription(holder[0]["arn"])
                if existing is not None:
                    return existing, False
        raise StoreUnavailable("the subscription kept changing under a subscribe")

    async def get_subscription(self, arn: str) -> Subscription | None:
        found = await self._get("s." + _hex(arn))
        return None if found is None else _subscription(found[0])

    async def update_subscription(
        self, arn: str, *, attributes: Mapping[str, str], confirmed: bool
    ) -> Subscription:
        sub = await self.get_subscription(arn)
        if sub is None:
            raise NotFound("Subscription does not exist")
        updated = Subscription(sub.arn, sub.topic_arn, sub.owner, sub.protocol, sub.endpoint,
                               dict(attributes), confirmed, sub.token)
        await self._replace("s." + _hex(arn), _sub_json(updated), "Subscription does not exist")
        return updated

    async def unsubscribe(self, arn: str) -> bool:
        sub = await self.get_subscription(arn)
        if sub is None:
            return False
        await self._delete("s." + _hex(arn))
        await self._delete("u." + _hex(f"{sub.topic_arn}|{sub.protocol}|{sub.endpoint}"))
        return True

    async def list_subscriptions(
        self, prefix: str, *, after: str | None, limit: int
    ) -> list[Subscription]:
        arns = _page([_unhex(k) for k in await self._keys("s")], prefix, after)
        out = []
        for arn in arns:
            sub = await self.get_subscription(arn)
            # A subscription of no topic (its delete was cut short) is not listed.
            if sub is not None and await self.get_topic(sub.topic_arn) is not None:
                out.append(sub)
            if len(out) == limit:
                break
        return out

    async def _all_subscriptions(self, prefix: str) -> list[Subscription]:
        arns = _page([_unhex(k) for k in await self._keys("s")], prefix, None)
        subs = [await self.get_subscription(arn) for arn in arns]
        return [s for s in subs if s is not None]

    async def signing_key(self, candidate: bytes) -> bytes:
        await self._create("key", {"pem": candidate.decode("ascii")})
        found = await self._get("key")
        assert found is not None
        return str(found[0]["pem"]).encode("ascii")


    # --- the outbox: `p.<id>` entries, leased by compare-and-set -----------------------

    async def add_posts(self, posts: Sequence[Post]) -> None:
        for post in posts:
            await self._create("p." + post.id, {**_post_json(post), "leased_until": 0.0})

    async def claim_posts(self, *, now: float, lease_until: float, limit: int) -> list[Post]:
        due = []
        for key in await self._keys("p"):
            found = await self._get(key)
            if found is not None and found[0]["due_at"] <= now >= found[0]["leased_until"]:
                due.append((found[0]["due_at"], key, found))
        claimed: list[Post] = []
        for _, key, (value, revision) in sorted(due, key=lambda item: item[:2]):
            if len(claimed) == limit:
                break
            if await self._swap(key, {**value, "leased_until": lease_until}, revision):
                claimed.append(_post(value))
        return claimed

    async def _swap(self, key: str, value: Mapping[str, Any], revision: int) -> bool:
        try:
            await self._kv.update(key, json.dumps(value).encode(), last=revision)
            return True
        except KeyWrongLastSequenceError:
            return False  # another server claimed or changed it first
        except _ERRORS as error:
            raise StoreUnavailable(str(error)) from error

    async def finish_post(self, post_id: str) -> None:
        await self._delete("p." + post_id)

    async def retry_post(self, post_id: str, *, attempts: int, due_at: float) -> None:
        for _ in range(_CAS_ATTEMPTS):
            found = await self._get("p." + post_id)
            if found is None:
                return
            value = {**found[0], "attempts": attempts, "due_at": due_at, "leased_until": 0.0}
            if await self._swap("p." + post_id, value, found[1]):
                return


def _post_json(post: Post) -> dict[str, Any]:
    return {"id": post.id, "subscription_arn": post.subscription_arn,
            "topic_arn": post.topic_arn, "url": post.url, "headers": dict(post.headers),
            "body": post.body, "attempts": post.attempts, "due_at": post.due_at}


def _post(value: Mapping[str, Any]) -> Post:
    fields = {k: v for k, v in value.items() if k != "leased_until"}
    return Post(**fields)


def _page(arns: list[str], prefix: str, after: str | None) -> list[str]:
    return sorted(a for a in arns if a.startswith(prefix) and (after is None or a > after))


def _topic_json(topic: Topic) -> dict[str, Any]:
    return {"attributes": dict(topic.attributes), "tags": dict(topic.tags)}


def _topic(arn: str, value: Mapping[str, Any]) -> Topic:
    return Topic(arn, dict(value["attributes"]), dict(value["tags"]))


def _sub_json(s: Subscription) -> dict[str, Any]:
    return {"arn": s.arn, "topic_arn": s.topic_arn, "owner": s.owner, "protocol": s.protocol,
            "endpoint": s.endpoint, "attributes": dict(s.attributes),
            "confirmed": s.confirmed, "token": s.token}


def _subscription(value: Mapping[str, Any]) -> Subscription:
    return Subscription(**value)
