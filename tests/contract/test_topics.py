"""TopicStore contract: topics, subscriptions and the signing key, on every store."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from hopper.sns.errors import NotFound
from hopper.sns.model import Post, Subscription, Topic
from hopper.sns.store import TopicStore

from .topic_stores import TOPIC_STORES

PREFIX = "arn:aws:sns:us-east-1:111111111111:"


@pytest.fixture(params=TOPIC_STORES)
async def topics(request: pytest.FixtureRequest) -> AsyncIterator[TopicStore]:
    async with request.param() as store:
        yield store


def topic(name: str, **attributes: str) -> Topic:
    return Topic(PREFIX + name, attributes, {})


def subscription(topic_name: str, sub_id: str, endpoint: str = "arn:aws:sqs:us-east-1:1:q",
                 **attributes: str) -> Subscription:
    return Subscription(PREFIX + f"{topic_name}:{sub_id}", PREFIX + topic_name, "1", "sqs",
                        endpoint, attributes)


async def test_create_topic_stores_it_once_and_returns_the_existing_one_after(
    topics: TopicStore,
) -> None:
    first, created = await topics.create_topic(topic("a", DisplayName="x"))
    again, created_again = await topics.create_topic(topic("a", DisplayName="y"))
    assert created and not created_again
    assert again == first == await topics.get_topic(PREFIX + "a")
    assert again.attributes == {"DisplayName": "x"}


async def test_concurrent_creates_of_one_topic_store_one(topics: TopicStore) -> None:
    results = await asyncio.gather(*(topics.create_topic(topic("a")) for _ in range(5)))
    assert sum(created for _, created in results) == 1


async def test_list_topics_pages_by_arn_within_the_prefix(topics: TopicStore) -> None:
    for name in ("c", "a", "b"):
        await topics.create_topic(topic(name))
    await topics.create_topic(Topic("arn:aws:sns:eu-west-1:111111111111:z"))
    page = await topics.list_topics(PREFIX, after=None, limit=2)
    assert [t.name for t in page] == ["a", "b"]
    rest = await topics.list_topics(PREFIX, after=page[-1].arn, limit=2)
    assert [t.name for t in rest] == ["c"]


async def test_update_topic_replaces_attributes_and_tags(topics: TopicStore) -> None:
    await topics.create_topic(topic("a", DisplayName="x"))
    updated = await topics.update_topic(PREFIX + "a", attributes={"Policy": "{}"},
                                        tags={"k": "v"})
    assert updated == await topics.get_topic(PREFIX + "a")
    assert (updated.attributes, updated.tags) == ({"Policy": "{}"}, {"k": "v"})


async def test_update_of_a_missing_topic_raises_not_found(topics: TopicStore) -> None:
    with pytest.raises(NotFound):
        await topics.update_topic(PREFIX + "gone", attributes={}, tags={})


async def test_delete_topic_deletes_its_subscriptions(topics: TopicStore) -> None:
    await topics.create_topic(topic("a"))
    await topics.subscribe(subscription("a", "1"))
    assert await topics.delete_topic(PREFIX + "a")
    assert await topics.get_topic(PREFIX + "a") is None
    assert await topics.get_subscription(PREFIX + "a:1") is None
    assert await topics.list_subscriptions(PREFIX, after=None, limit=10) == []
    assert not await topics.delete_topic(PREFIX + "a")


async def test_subscribe_keeps_one_subscription_per_endpoint(topics: TopicStore) -> None:
    await topics.create_topic(topic("a"))
    first, created = await topics.subscribe(subscription("a", "1"))
    again, created_again = await topics.subscribe(subscription("a", "2"))
    other, created_other = await topics.subscribe(subscription("a", "3", endpoint="e2"))
    assert created and not created_again and created_other
    assert again == first
    assert [s.arn for s in await topics.list_subscriptions(PREFIX + "a:", after=None,
                                                           limit=10)] == [first.arn, other.arn]


async def test_concurrent_subscribes_of_one_endpoint_store_one(topics: TopicStore) -> None:
    await topics.create_topic(topic("a"))
    results = await asyncio.gather(*(topics.subscribe(subscription("a", str(n)))
                                     for n in range(5)))
    assert sum(created for _, created in results) == 1
    assert len({sub.arn for sub, _ in results}) == 1


async def test_subscribe_to_a_missing_topic_raises_not_found(topics: TopicStore) -> None:
    with pytest.raises(NotFound):
        await topics.subscribe(subscription("gone", "1"))


async def test_update_subscription_replaces_attributes_and_confirmation(
    topics: TopicStore,
) -> None:
    await topics.create_topic(topic("a"))
    sub, _ = await topics.subscribe(subscription("a", "1"))
    updated = await topics.update_subscription(sub.arn, attributes={"RawMessageDelivery": "true"},
                                               confirmed=False)
    assert updated == await topics.get_subscription(sub.arn)
    assert updated.attributes == {"RawMessageDelivery": "true"} and not updated.confirmed
    with pytest.raises(NotFound):
        await topics.update_subscription(PREFIX + "a:gone", attributes={}, confirmed=True)


async def test_unsubscribe_frees_the_endpoint(topics: TopicStore) -> None:
    await topics.create_topic(topic("a"))
    sub, _ = await topics.subscribe(subscription("a", "1"))
    assert await topics.unsubscribe(sub.arn)
    assert not await topics.unsubscribe(sub.arn)
    again, created = await topics.subscribe(subscription("a", "2"))
    assert created and again.arn == PREFIX + "a:2"


async def test_signing_key_is_the_first_candidate_forever(topics: TopicStore) -> None:
    assert await topics.signing_key(b"first") == b"first"
    assert await topics.signing_key(b"second") == b"first"


def post(post_id: str, due_at: float) -> Post:
    return Post(post_id, PREFIX + "a:1", PREFIX + "a", "http://127.0.0.1:9/",
                {"x-amz-sns-message-type": "Notification"}, "body", 0, due_at)


async def test_posts_are_claimed_when_due_oldest_first_and_leased(topics: TopicStore) -> None:
    await topics.add_posts([post("late", 200.0), post("early", 100.0), post("later", 900.0)])
    claimed = await topics.claim_posts(now=500.0, lease_until=530.0, limit=10)
    assert [p.id for p in claimed] == ["early", "late"]
    assert claimed[0] == post("early", 100.0)
    assert await topics.claim_posts(now=520.0, lease_until=550.0, limit=10) == []
    again = await topics.claim_posts(now=531.0, lease_until=560.0, limit=1)
    assert [p.id for p in again] == ["early"]


async def test_concurrent_claims_never_take_one_post_twice(topics: TopicStore) -> None:
    await topics.add_posts([post(str(n), 1.0) for n in range(6)])
    claims = await asyncio.gather(*(topics.claim_posts(now=10.0, lease_until=40.0, limit=6)
                                    for _ in range(3)))
    ids = [p.id for claim in claims for p in claim]
    assert sorted(ids) == [str(n) for n in range(6)]


async def test_a_retried_post_is_due_again_unleased_and_a_finished_one_gone(
    topics: TopicStore,
) -> None:
    await topics.add_posts([post("p", 1.0), post("q", 1.0)])
    await topics.claim_posts(now=10.0, lease_until=100.0, limit=10)
    await topics.retry_post("p", attempts=1, due_at=20.0)
    await topics.finish_post("q")
    await topics.finish_post("q")
    [retried] = await topics.claim_posts(now=20.0, lease_until=50.0, limit=10)
    assert (retried.id, retried.attempts, retried.due_at) == ("p", 1, 20.0)
