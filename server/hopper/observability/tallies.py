"""Counts taken on the request path in plain Python numbers, handed to prometheus-client
when /metrics is read.

prometheus-client takes a lock for every increment (a counter's value, and a histogram's
sum and bucket, each hold a threading.Lock): four locks and their bookkeeping for every
SendMessage. A process answers its requests on one asyncio loop, so a dict keyed by the
label values counts them without one; `publish` moves what was counted into the metric
just before a scrape reads it.

In multiprocess mode (`hopper serve --workers N`) the worker that answers a scrape reads
the other workers' files, which hold only what those workers wrote: there each count
goes to the metric at once, as before. prometheus-client chooses its file-backed values
when it is imported, by the same variable, so the choice here is made likewise.
"""

from __future__ import annotations

import os
from bisect import bisect_left
from typing import Any

from prometheus_client import Counter, Histogram

Labels = tuple[str, ...]


def _multiprocess() -> bool:
    return bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))


class _Children:
    """`metric.labels`, remembered: labels() validates and locks on every call."""

    def __init__(self, metric: Counter | Histogram) -> None:
        self.metric = metric
        self._known: dict[Labels, Any] = {}

    def __call__(self, values: Labels) -> Any:
        found = self._known.get(values)
        if found is None:
            found = self._known[values] = self.metric.labels(*values)
        return found

    def remove(self, values: Labels) -> None:
        if self._known.pop(values, None) is not None or values in self.label_sets():
            self.metric.remove(*values)

    def label_sets(self) -> set[Labels]:
        # prometheus-client keeps its children by their label values.
        return {tuple(values) for values in self.metric._metrics}


class Tally:
    """A Counter's increments by label values, until `publish`."""

    def __init__(self, metric: Counter) -> None:
        self._children = _Children(metric)
        self._counts: dict[Labels, float] = {}
        self._at_once = _multiprocess()

    def add(self, values: Labels, amount: float = 1) -> None:
        if self._at_once:
            self._children(values).inc(amount)
            return
        counts = self._counts
        counts[values] = counts.get(values, 0) + amount

    def publish(self) -> None:
        counts, self._counts = self._counts, {}
        for values, amount in counts.items():
            self._children(values).inc(amount)

    def remove(self, values: Labels) -> None:
        """The series ends: its counts are forgotten, published or not."""
        self._counts.pop(values, None)
        self._children.remove(values)

    def label_sets(self) -> set[Labels]:
        return self._children.label_sets() | set(self._counts)


class Timings:
    """A Histogram's observations by label values, until `publish`: per label values,
    the count in each bucket and then their sum."""

    def __init__(self, metric: Histogram) -> None:
        self._children = _Children(metric)
        # The buckets' upper bounds, +Inf last, as prometheus-client keeps them.
        self._bounds: list[float] = list(metric._upper_bounds)
        self._tallies: dict[Labels, list[float]] = {}
        self._at_once = _multiprocess()

    def observe(self, values: Labels, amount: float) -> None:
        if self._at_once:
            self._children(values).observe(amount)
            return
        tally = self._tallies.get(values)
        if tally is None:
            tally = self._tallies[values] = [0] * (len(self._bounds) + 1)
        # The first bucket whose bound is >= amount: Histogram.observe's `amount <= bound`.
        tally[bisect_left(self._bounds, amount)] += 1
        tally[-1] += amount

    def publish(self) -> None:
        tallies, self._tallies = self._tallies, {}
        for values, tally in tallies.items():
            child = self._children(values)
            # Histogram.observe's own steps (its sum, then the bucket), in bulk.
            child._sum.inc(tally[-1])
            for bucket, count in zip(child._buckets, tally[:-1], strict=True):
                if count:
                    bucket.inc(count)
