"""Subscription actions: Subscribe, ConfirmSubscription, Unsubscribe,
ListSubscriptions, ListSubscriptionsByTopic, Get/SetSubscriptionAttributes."""

from __future__ import annotations

from typing import Any

from hopper.sns import attributes
from hopper.sns.model import Subscription
from hopper.sns.service import Page, pending_or_arn
from hopper.wire.context import RequestContext
from hopper.wire.sns import params
from hopper.wire.sns.params import Tree
from hopper.wire.sns.parts import Sns
from hopper.wire.sns.render import entries, members

Result = dict[str, Any] | None


async def subscribe(sns: Sns, ctx: RequestContext, p: Tree) -> Result:
    sub = await sns.topics.subscribe(
        params.required(p, "TopicArn"), params.required(p, "Protocol"),
        params.text(p, "Endpoint") or "", params.entries(p, "Attributes"), ctx.account,
        ctx.base_url,
    )
    return {"SubscriptionArn": pending_or_arn(sub, params.flag(p, "ReturnSubscriptionArn"))}


async def confirm_subscription(sns: Sns, ctx: RequestContext, p: Tree) -> Result:
    sub = await sns.topics.confirm(params.required(p, "TopicArn"), params.required(p, "Token"))
    return {"SubscriptionArn": sub.arn}


async def unsubscribe(sns: Sns, ctx: RequestContext, p: Tree) -> Result:
    await sns.topics.unsubscribe(params.required(p, "SubscriptionArn"))
    return None


async def list_subscriptions(sns: Sns, ctx: RequestContext, p: Tree) -> Result:
    page = await sns.topics.list_subscriptions(ctx.region, ctx.account,
                                               params.text(p, "NextToken"))
    return _listing(page)


async def list_subscriptions_by_topic(sns: Sns, ctx: RequestContext, p: Tree) -> Result:
    page = await sns.topics.topic_subscriptions(params.required(p, "TopicArn"),
                                                params.text(p, "NextToken"))
    return _listing(page)


def _listing(page: Page) -> dict[str, Any]:
    tree: dict[str, Any] = {"Subscriptions": members([_row(s) for s in page.items])}
    if page.next_token:
        tree["NextToken"] = page.next_token
    return tree


def _row(sub: Any) -> dict[str, str]:
    assert isinstance(sub, Subscription)
    return {
        "SubscriptionArn": sub.arn if sub.confirmed else "PendingConfirmation",
        "Owner": sub.owner, "Protocol": sub.protocol, "Endpoint": sub.endpoint,
        "TopicArn": sub.topic_arn,
    }


async def get_subscription_attributes(sns: Sns, ctx: RequestContext, p: Tree) -> Result:
    sub = await sns.topics.subscription(params.required(p, "SubscriptionArn"))
    return {"Attributes": entries(attributes.subscription_view(sub))}


async def set_subscription_attributes(sns: Sns, ctx: RequestContext, p: Tree) -> Result:
    await sns.topics.set_subscription_attribute(
        params.required(p, "SubscriptionArn"), params.required(p, "AttributeName"),
        params.text(p, "AttributeValue") or "",
    )
    return None
