"""Prometheus counters of SNS, per topic: publications, copies delivered and copies that
failed, by protocol. They live in the process's counter registry (metrics.py), so
/metrics shows them beside the queues' counters, in multiprocess mode too."""

from __future__ import annotations

from prometheus_client import Counter

from hopper.observability.metrics import REGISTRY

PUBLISHED = Counter(
    "hopper_sns_messages_published", "Messages published to a topic (Publish, PublishBatch).",
    ["topic"], registry=REGISTRY,
)
DELIVERED = Counter(
    "hopper_sns_deliveries", "Copies of published messages delivered to subscribers.",
    ["topic", "protocol"], registry=REGISTRY,
)
FAILED = Counter(
    "hopper_sns_deliveries_failed",
    "Copies that could not be delivered (then sent to the subscription's dead-letter "
    "queue, if it has one).",
    ["topic", "protocol"], registry=REGISTRY,
)


class TopicRecorder:
    """hopper.sns.deliveries.TopicEvents as Prometheus counters."""

    def published(self, topic_arn: str, count: int) -> None:
        PUBLISHED.labels(topic_arn).inc(count)

    def delivered(self, topic_arn: str, protocol: str) -> None:
        DELIVERED.labels(topic_arn, protocol).inc()

    def failed(self, topic_arn: str, protocol: str) -> None:
        FAILED.labels(topic_arn, protocol).inc()
