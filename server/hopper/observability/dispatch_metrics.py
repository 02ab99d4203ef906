"""Prometheus metrics of Hopper.Dispatch, in metrics.py's registry (and its
multiprocess mode): calls by outcome, their latency, and the messages whose failure
scheduled a retry under the queue's retry policy."""

from __future__ import annotations

import os

from prometheus_client import Counter, Histogram

from hopper.core.model import QueueKey
from hopper.observability.metrics import MULTIPROCESS_VARIABLE, QUEUE_FORGETTERS, REGISTRY

_QUEUE = ["account", "queue"]

CALLS = Counter(
    "hopper_dispatch_calls",
    "Calls of queues' dispatch targets by outcome (success, partial, error, timeout, refused).",
    [*_QUEUE, "outcome"], registry=REGISTRY,
)
CALL_LATENCY = Histogram(
    "hopper_dispatch_call_duration_seconds", "Time a dispatch target took to answer a call.",
    _QUEUE, registry=REGISTRY,
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
)
RETRIES = Counter(
    "hopper_retries_scheduled",
    "Messages a dispatch target failed, released to the queue's retry policy.",
    _QUEUE, registry=REGISTRY,
)


# Outcome.label's values (dispatch/calls.py): the series a queue's calls can have.
OUTCOMES = ("success", "partial", "error", "timeout", "refused")


def forget(key: QueueKey) -> None:
    """Drop a deleted queue's series. With --workers the series live in each worker's
    file, where prometheus-client cannot remove one: the scrape leaves deleted queues'
    samples out instead (metrics.scrape)."""
    if os.environ.get(MULTIPROCESS_VARIABLE):
        return
    for outcome in OUTCOMES:
        CALLS.remove(key.account, key.name, outcome)
    CALL_LATENCY.remove(key.account, key.name)
    RETRIES.remove(key.account, key.name)


QUEUE_FORGETTERS.append(forget)


class DispatchRecorder:
    """The dispatchers' events (dispatch/queue.py's DispatchEvents) as metrics."""

    def called(self, key: QueueKey, outcome: str, seconds: float, messages: int) -> None:
        CALLS.labels(key.account, key.name, outcome).inc()
        CALL_LATENCY.labels(key.account, key.name).observe(seconds)

    def retried(self, key: QueueKey, messages: int) -> None:
        RETRIES.labels(key.account, key.name).inc(messages)
