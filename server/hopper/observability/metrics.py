"""Prometheus metrics, served at GET /metrics.

- Per queue gauges (visible, in flight, delayed, dead-letter depth, oldest ages) come
  from the store at scrape time (overview.py): its stats per queue, the counts
  GetQueueAttributes gives, re-measured as often as their cost allows (Counts: a big
  queue's counts may be some seconds old, a small queue's are exact).
- Per queue counters (sends, receives, deletes, redeliveries, moves to dead-letter
  queues) count what this process's queue core reported (core/events.py).
- Per action: requests by outcome (`ok`, or the SQS error name) and a latency histogram.

With several worker processes (`hopper serve --workers N`) the counters and the
histogram use prometheus-client's multiprocess mode: `hopper serve` points
PROMETHEUS_MULTIPROC_DIR at a fresh directory before the workers start, each worker
writes its values there, and whichever worker answers a scrape sums them all.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

from hopper.core.model import Delivery, QueueKey
from hopper.core.service import QueueService
from hopper.observability.overview import Counts, QueueView, overview

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
MULTIPROCESS_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"

# The process's own counters; in multiprocess mode their values live in files instead.
_REGISTRY = CollectorRegistry()
_QUEUE = ["account", "queue"]

SENT = Counter(
    "hopper_messages_sent", "Messages that entered a queue (duplicates excluded).",
    _QUEUE, registry=_REGISTRY,
)
RECEIVED = Counter(
    "hopper_messages_received", "Deliveries handed out by ReceiveMessage.",
    _QUEUE, registry=_REGISTRY,
)
DELETED = Counter(
    "hopper_messages_deleted", "Messages deleted with DeleteMessage (and its batch).",
    _QUEUE, registry=_REGISTRY,
)
REDELIVERIES = Counter(
    "hopper_redeliveries", "Deliveries of messages that had been received before.",
    _QUEUE, registry=_REGISTRY,
)
DEAD_LETTERED = Counter(
    "hopper_messages_dead_lettered",
    "Messages moved from this queue to its dead-letter queue (maxReceiveCount exceeded).",
    _QUEUE, registry=_REGISTRY,
)
REQUESTS = Counter(
    "hopper_requests", "SQS requests by action and outcome (ok, or the SQS error name).",
    ["action", "outcome"], registry=_REGISTRY,
)
# Long polls stay open up to 20 s, so the buckets reach past that.
LATENCY = Histogram(
    "hopper_request_duration_seconds", "Time to answer an SQS request, by action.",
    ["action"], registry=_REGISTRY,
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30),
)


def _children(metric: Counter | Histogram) -> Callable[..., Any]:
    """`metric.labels`, remembered: labels() validates and locks on every call, a few
    microseconds per request on the hot path; children are never removed here."""
    known: dict[tuple[str, ...], Any] = {}

    def child(*values: str) -> Any:
        found = known.get(values)
        if found is None:
            found = known[values] = metric.labels(*values)
        return found

    return child


_SENT, _RECEIVED, _DELETED = _children(SENT), _children(RECEIVED), _children(DELETED)
_REQUESTS, _LATENCY = _children(REQUESTS), _children(LATENCY)


class Recorder:
    """The core's events (core/events.py) as counters. Moves to dead-letter queues
    happen inside the store's receive; its running tally is turned into counter
    increments after each receive."""

    def __init__(self, dead_lettered: Callable[[], Mapping[QueueKey, int]]) -> None:
        self._dead_lettered = dead_lettered
        self._seen: dict[QueueKey, int] = {}

    def sent(self, key: QueueKey, count: int) -> None:
        if count:
            _SENT(key.account, key.name).inc(count)

    def received(self, key: QueueKey, deliveries: Sequence[Delivery]) -> None:
        if deliveries:
            _RECEIVED(key.account, key.name).inc(len(deliveries))
            again = sum(d.receive_count > 1 for d in deliveries)
            if again:
                REDELIVERIES.labels(key.account, key.name).inc(again)
        self._count_dead_letters()

    def deleted(self, key: QueueKey, count: int) -> None:
        if count:
            _DELETED(key.account, key.name).inc(count)

    def _count_dead_letters(self) -> None:
        for key, total in self._dead_lettered().items():
            new = total - self._seen.get(key, 0)
            if new > 0:
                DEAD_LETTERED.labels(key.account, key.name).inc(new)
                self._seen[key] = total


def observe_request(action: str, outcome: str, seconds: float) -> None:
    _REQUESTS(action, outcome).inc()
    _LATENCY(action).observe(seconds)


async def scrape(service: QueueService, counts: Counts) -> bytes:
    """The text of one scrape: the counters, then the queue gauges."""
    views = await overview(service, counts)
    gauges = CollectorRegistry()
    gauges.register(_QueueGauges(views, service.wakeups.total_waiting()))
    return generate_latest(_counters()) + generate_latest(gauges)


def _counters() -> CollectorRegistry:
    directory = os.environ.get(MULTIPROCESS_VARIABLE)
    if not directory:
        return _REGISTRY
    merged = CollectorRegistry()
    MultiProcessCollector(merged, path=directory)  # type: ignore[no-untyped-call]
    return merged


class _QueueGauges(Collector):
    def __init__(self, views: list[QueueView], waiting: int) -> None:
        self._views = views
        self._waiting = waiting

    def collect(self) -> Iterator[GaugeMetricFamily]:
        families = {
            "visible": _gauge("hopper_queue_messages_visible", "Messages receivable now."),
            "in_flight": _gauge(
                "hopper_queue_messages_in_flight", "Messages received and not yet deleted."
            ),
            "delayed": _gauge("hopper_queue_messages_delayed", "Messages not yet receivable."),
            "dead": _gauge(
                "hopper_queue_dead_letter_depth",
                "Messages in the queue's dead-letter queue (queues with a RedrivePolicy).",
            ),
            "age": _gauge(
                "hopper_queue_oldest_visible_message_age_seconds",
                "Age of the oldest visible message: how far behind the consumers are.",
            ),
            "oldest": _gauge(
                "hopper_queue_oldest_message_age_seconds",
                "Age of the oldest message in the queue, whatever its state.",
            ),
        }
        for view in self._views:
            labels = [view.key.account, view.key.name]
            families["visible"].add_metric(labels, view.stats.visible)
            families["in_flight"].add_metric(labels, view.stats.in_flight)
            families["delayed"].add_metric(labels, view.stats.delayed)
            if view.dead_letter_depth is not None:
                families["dead"].add_metric(labels, view.dead_letter_depth)
            # An empty queue is not behind: its age is 0, so alerts need no absent().
            families["age"].add_metric(labels, view.oldest_visible_age or 0.0)
            families["oldest"].add_metric(labels, view.oldest_age or 0.0)
        yield from families.values()
        waiting = GaugeMetricFamily(
            "hopper_long_polls_waiting",
            "Long polls waiting for messages in the process that answered this scrape.",
        )
        waiting.add_metric([], self._waiting)
        yield waiting


def _gauge(name: str, documentation: str) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, documentation, labels=_QUEUE)
