"""Topic actions: CreateTopic, DeleteTopic, ListTopics, Get/SetTopicAttributes,
AddPermission, RemovePermission, TagResource, UntagResource, ListTagsForResource."""

from __future__ import annotations

from typing import Any

from hopper.sns.errors import invalid
from hopper.wire.context import RequestContext
from hopper.wire.sns import params
from hopper.wire.sns.params import Tree
from hopper.wire.sns.parts import Sns
from hopper.wire.sns.render import entries, members

Result = dict[str, Any] | None


async def create_topic(sns: Sns, ctx: RequestContext, p: Tree) -> Result:
    topic = await sns.topics.create_topic(
        ctx.region, ctx.account, params.required(p, "Name"),
        params.entries(p, "Attributes"), params.tags(p, "Tags"),
    )
    return {"TopicArn": topic.arn}


async def delete_topic(sns: Sns, ctx: RequestContext, p: Tree) -> Result:
    await sns.topics.delete_topic(params.required(p, "TopicArn"))
    return None


async def list_topics(sns: Sns, ctx: RequestContext, p: Tree) -> Result:
    page = await sns.topics.list_topics(ctx.region, ctx.account, params.text(p, "NextToken"))
    tree: dict[str, Any] = {"Topics": members([{"TopicArn": t.arn} for t in page.items])}
    if page.next_token:
        tree["NextToken"] = page.next_token
    return tree


async def get_topic_attributes(sns: Sns, ctx: RequestContext, p: Tree) -> Result:
    view = await sns.topics.topic_attributes(params.required(p, "TopicArn"))
    return {"Attributes": entries(view)}


async def set_topic_attributes(sns: Sns, ctx: RequestContext, p: Tree) -> Result:
    await sns.topics.set_topic_attribute(
        params.required(p, "TopicArn"), params.required(p, "AttributeName"),
        params.text(p, "AttributeValue") or "",
    )
    return None


async def add_permission(sns: Sns, ctx: RequestContext, p: Tree) -> Result:
    await sns.topics.add_permission(
        params.required(p, "TopicArn"), params.required(p, "Label"),
        params.strings(p, "AWSAccountId"), params.strings(p, "ActionName"),
    )
    return None


async def remove_permission(sns: Sns, ctx: RequestContext, p: Tree) -> Result:
    await sns.topics.remove_permission(params.required(p, "TopicArn"),
                                       params.required(p, "Label"))
    return None


async def tag_resource(sns: Sns, ctx: RequestContext, p: Tree) -> Result:
    tags = params.tags(p, "Tags")
    if not tags:
        raise invalid("Tags")
    await sns.topics.tag(params.required(p, "ResourceArn"), tags, [])
    return {}


async def untag_resource(sns: Sns, ctx: RequestContext, p: Tree) -> Result:
    keys = params.strings(p, "TagKeys")
    if not keys:
        raise invalid("TagKeys")
    await sns.topics.tag(params.required(p, "ResourceArn"), {}, keys)
    return {}


async def list_tags_for_resource(sns: Sns, ctx: RequestContext, p: Tree) -> Result:
    tags = await sns.topics.tags(params.required(p, "ResourceArn"))
    return {"Tags": members([{"Key": k, "Value": v} for k, v in tags.items()])}
