"""One SNS request in, one SNS answer out: never an exception, never a 500 for bad
input. The caller (http.py) has read the body and admitted the caller."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from hopper.core import characters
from hopper.core.errors import QueueError
from hopper.sns.errors import TopicError
from hopper.wire import forms
from hopper.wire.context import RequestContext
from hopper.wire.errors import SqsError
from hopper.wire.render_json import Rendered
from hopper.wire.sns import errors, params, publishing, render, subscriptions, topics
from hopper.wire.sns.parts import Sns

log = logging.getLogger("hopper.sns")
Handler = Callable[[Sns, RequestContext, params.Tree], Awaitable[dict[str, Any] | None]]

ACTIONS: dict[str, Handler] = {
    "CreateTopic": topics.create_topic,
    "DeleteTopic": topics.delete_topic,
    "ListTopics": topics.list_topics,
    "GetTopicAttributes": topics.get_topic_attributes,
    "SetTopicAttributes": topics.set_topic_attributes,
    "AddPermission": topics.add_permission,
    "RemovePermission": topics.remove_permission,
    "TagResource": topics.tag_resource,
    "UntagResource": topics.untag_resource,
    "ListTagsForResource": topics.list_tags_for_resource,
    "Subscribe": subscriptions.subscribe,
    "ConfirmSubscription": subscriptions.confirm_subscription,
    "Unsubscribe": subscriptions.unsubscribe,
    "ListSubscriptions": subscriptions.list_subscriptions,
    "ListSubscriptionsByTopic": subscriptions.list_subscriptions_by_topic,
    "GetSubscriptionAttributes": subscriptions.get_subscription_attributes,
    "SetSubscriptionAttributes": subscriptions.set_subscription_attributes,
    "Publish": publishing.publish,
    "PublishBatch": publishing.publish_batch,
}


async def serve(
    sns: Sns, ctx: RequestContext, method: str, query_string: bytes, body: bytes
) -> tuple[str | None, str | None, Rendered]:
    """(the action if it is one, the error code if it failed, the answer) of one SNS
    request."""
    action = None
    try:
        fields = forms.form_fields(query_string)
        if method == "POST":
            fields.update(forms.form_fields(body))
        action = fields.get("Action")
        handler = ACTIONS.get(action or "")
        if handler is None:
            raise _unknown(action)
        _check_characters(fields)
        tree = await handler(sns, ctx, params.tree(fields))
        return action, None, render.result(action or "", tree, ctx.request_id)
    except Exception as failure:  # noqa: BLE001 - every failure is answered in SNS's XML
        wire = translate(failure, ctx.request_id)
        known = action if action in ACTIONS else None
        return known, wire.code, render.failure(wire, ctx.request_id)


def translate(failure: Exception, request_id: str) -> errors.SnsError:
    if isinstance(failure, errors.SnsError):
        return failure
    if isinstance(failure, TopicError):
        return errors.from_core(failure)
    if isinstance(failure, SqsError):
        return errors.from_sqs(failure)
    if isinstance(failure, QueueError):
        return errors.from_queue(failure)
    log.error("hopper: SNS request %s failed", request_id, exc_info=failure)
    return errors.internal()


def _check_characters(fields: dict[str, str]) -> None:
    """Nothing SNS keeps or sends back may hold what XML 1.0 cannot carry (NUL, other
    control characters, lone surrogates): such a field is refused, whatever its
    action, before a store sees it (PostgreSQL refuses NUL in text outright)."""
    for name, value in fields.items():
        if not characters.allowed(value) or not characters.allowed(name):
            raise errors.error(
                "InvalidParameter",
                f"Invalid parameter: {name} Reason: contains characters that are not allowed",
            )


def _unknown(action: str | None) -> errors.SnsError:
    if not action:
        return errors.error("MissingAction", "Missing Action")
    return errors.error("InvalidAction", f"The action {action} is not valid for this endpoint.")
