"""SNS beside the queues: the topic store matching the queue store, its fan-out, the
services, and the route of the signing certificate. app.py calls `assemble_sns`."""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from hopper.core.service import QueueService
from hopper.observability.sns_metrics import TopicRecorder
from hopper.settings import Settings
from hopper.sns.deliveries import Deliveries
from hopper.sns.service import TopicService
from hopper.sns.signing import CERTIFICATE_PATH
from hopper.sns.store import QueueFanout, TopicStore
from hopper.sns_http import HttpDeliveries, attach
from hopper.wire.sns.parts import Sns
from hopper.wire.sns.queue_arns import resolver


@dataclass
class SnsAssembly:
    parts: Sns
    store: TopicStore
    http: HttpDeliveries | None = None

    async def start(self) -> None:
        await self.store.start()
        await self.parts.deliveries.start()
        if self.http is not None:
            self.http.start()

    async def close(self) -> None:
        if self.http is not None:
            await self.http.close()
        await self.store.close()

    def routes(self) -> list[BaseRoute]:
        async def certificate(request: Request) -> Response:
            signer = self.parts.deliveries.signer
            if signer is None:
                return Response("starting", 503)
            return Response(signer.certificate, media_type="application/x-pem-file")

        return [Route(CERTIFICATE_PATH, certificate, methods=["GET"])]


def assemble_sns(settings: Settings, queues: QueueService) -> SnsAssembly:
    store, fanout = _stores(settings, queues)
    topics = TopicService(store)
    deliveries = Deliveries(topics, fanout, resolver(settings.region))
    deliveries.events = TopicRecorder()
    http = attach(topics, deliveries)
    return SnsAssembly(Sns(topics, deliveries), store, http)


def _stores(settings: Settings, queues: QueueService) -> tuple[TopicStore, QueueFanout]:
    if settings.nats_url is not None:
        from hopper.store.jetstream.topics import JetStreamTopicStore
        from hopper.store.memory.topics import ServiceFanout

        urls = [url.strip() for url in settings.nats_url.split(",") if url.strip()]
        nats = JetStreamTopicStore(urls, replicas=settings.nats_replicas)
        return nats, ServiceFanout(queues, nats)
    if settings.database_url is None:
        from hopper.store.memory.topics import MemoryTopicStore, ServiceFanout

        memory = MemoryTopicStore()
        return memory, ServiceFanout(queues, memory)
    from hopper.store.postgres.topics import PostgresTopicStore

    postgres = PostgresTopicStore(settings.database_url, schema=settings.database_schema)
    return postgres, postgres
