"""The console's SNS API, beside its queues' (console/api.py), acting through the topic
core (TopicService, Deliveries) as an SNS request does.

    GET    topics              the caller's topics, each with its subscriptions
    POST   topics/publish      {topic_arn, message, subject?, group_id?,
                                deduplication_id?} -> {message_id}

With `--auth sigv4` a caller sees its own account's topics only; another's are
answered as topics that do not exist.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from hopper.console import sessions
from hopper.console.answers import Caller, Problem, answering, caller, json_body, text_field
from hopper.sns.envelopes import Addresses
from hopper.sns.errors import TopicError
from hopper.sns.model import Subscription, Topic
from hopper.sns.publishing import PublishDraft
from hopper.wire.sns.errors import from_core
from hopper.wire.sns.parts import Sns

PREFIX = "/dashboard/api/topics"
_EVERY = 10**9


class TopicConsole:
    def __init__(self, sns: Sns, *, signed: sessions.Sessions | None) -> None:
        self.sns, self.signed = sns, signed

    def routes(self) -> list[BaseRoute]:
        return [
            Route(PREFIX, answering(self.topics), methods=["GET"]),
            Route(PREFIX + "/publish", answering(self.publish), methods=["POST"]),
        ]

    async def topics(self, request: Request) -> Response:
        who = caller(request, self.signed)
        store = self.sns.topics.store
        found = await store.list_topics("arn:aws:sns:", after=None, limit=_EVERY)
        visible = [topic for topic in found if _sees(who, topic)]
        subs = await store.list_subscriptions("arn:aws:sns:", after=None, limit=_EVERY)
        return JSONResponse({"topics": [_topic_json(topic, subs) for topic in visible]})

    async def publish(self, request: Request) -> Response:
        who = caller(request, self.signed)
        document = await json_body(request)
        arn = text_field(document, "topic_arn") or ""
        draft = PublishDraft(message=text_field(document, "message"),
                             subject=text_field(document, "subject"),
                             group_id=text_field(document, "group_id"),
                             deduplication_id=text_field(document, "deduplication_id"))
        try:
            topic = await self.sns.topics.topic(arn)
            if not _sees(who, topic):
                raise Problem(404, "Topic does not exist", "NotFound")
            base = f"{request.url.scheme}://{request.url.netloc}"
            publication = await self.sns.deliveries.publish(arn, draft, Addresses(base))
        except TopicError as error:
            wire = from_core(error)
            raise Problem(wire.status if wire.status < 500 else 503, wire.message,
                          wire.code) from None
        return JSONResponse({"message_id": publication.id})


def _sees(who: Caller, topic: Topic) -> bool:
    return who.account is None or topic.account == who.account


def _topic_json(topic: Topic, subs: list[Subscription]) -> dict[str, Any]:
    return {
        "arn": topic.arn, "name": topic.name, "region": topic.region,
        "account": topic.account, "fifo": topic.fifo,
        "subscriptions": [
            {"arn": sub.arn, "protocol": sub.protocol, "endpoint": sub.endpoint,
             "confirmed": sub.confirmed,
             "raw": sub.attributes.get("RawMessageDelivery", "false") == "true",
             "filter_policy": sub.attributes.get("FilterPolicy")}
            for sub in subs if sub.topic_arn == topic.arn
        ],
    }
