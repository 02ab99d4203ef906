"""A short history per queue, kept in memory for the console's charts: per interval
(30 s) over the last hour, the depth last seen and the messages sent, received and
deleted in it. It hears the core's events (core/events.py) and a sampler records
depths in the background, so a chart has an hour behind it the first time it is
looked at. Bounded: at most `max_queues` queues are tracked (the first ones seen;
deleted queues are forgotten at the next sample), each with a fixed number of
intervals. Each server process keeps its own (with --workers N, its own share of the
sends, receives and deletes; depths are the store's, the same everywhere)."""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hopper.core.errors import QueueError
from hopper.core.model import Delivery, QueueKey
from hopper.core.service import QueueService
from hopper.observability.overview import Counts, overview

INTERVAL_SECONDS = 30.0
SPAN_SECONDS = 3600.0
MAX_QUEUES = 1000
# How often the sampler looks at depths: a few times per interval, so each interval
# holds a recent depth; Counts keeps the cost of counting at 1% of the time.
SAMPLE_SECONDS = 10.0
# At most this share of the time goes to taking samples (with many queues), as long as
# each interval of two still gets one (a first count of every queue is slow).
SAMPLE_SHARE = 0.01
MAX_SAMPLE_GAP = 2 * INTERVAL_SECONDS

log = logging.getLogger("hopper.console")


@dataclass(slots=True)
class _Interval:
    start: float
    depth: int | None = None
    sent: int = 0
    received: int = 0
    deleted: int = 0


class History:
    def __init__(
        self,
        *,
        interval: float = INTERVAL_SECONDS,
        span: float = SPAN_SECONDS,
        max_queues: int = MAX_QUEUES,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.interval = interval
        self._length = max(1, math.ceil(span / interval))
        self._max_queues = max_queues
        self._clock = clock
        self._series: dict[QueueKey, deque[_Interval]] = {}

    # --- what the core tells (core/events.py) ------------------------------------------

    def sent(self, key: QueueKey, count: int) -> None:
        if count:
            current = self._current(key)
            if current is not None:
                current.sent += count

    def received(self, key: QueueKey, deliveries: Sequence[Delivery]) -> None:
        if deliveries:
            current = self._current(key)
            if current is not None:
                current.received += len(deliveries)

    def deleted(self, key: QueueKey, count: int) -> None:
        if count:
            current = self._current(key)
            if current is not None:
                current.deleted += count

    def queue_deleted(self, key: QueueKey) -> None:
        self._series.pop(key, None)

    # --- depths ------------------------------------------------------------------------

    def depth(self, key: QueueKey, depth: int) -> None:
        current = self._current(key)
        if current is not None:
            current.depth = depth

    def keep_only(self, keys: set[QueueKey]) -> None:
        """Forget the queues not in `keys` (deleted ones), making room for others."""
        for key in self._series.keys() - keys:
            del self._series[key]

    def tracked(self) -> int:
        return len(self._series)

    # --- reading -------------------------------------------------------------------------

    def points(self, key: QueueKey) -> list[dict[str, Any]]:
        """Every interval of the span, oldest first, ending with the current one: an
        interval with nothing recorded has zero counts and no depth (None)."""
        known = {i.start: i for i in self._series.get(key, ())}
        last = self._start(self._clock())
        points = []
        for n in range(self._length - 1, -1, -1):
            start = last - n * self.interval
            found = known.get(start) or _Interval(start)
            points.append({
                "at": start, "depth": found.depth, "sent": found.sent,
                "received": found.received, "deleted": found.deleted,
            })
        return points

    def _start(self, now: float) -> float:
        return math.floor(now / self.interval) * self.interval

    def _current(self, key: QueueKey) -> _Interval | None:
        start = self._start(self._clock())
        series = self._series.get(key)
        if series is None:
            if len(self._series) >= self._max_queues:
                return None
            series = self._series[key] = deque(maxlen=self._length)
        if not series or series[-1].start != start:
            series.append(_Interval(start))
        return series[-1]


async def sample_depths(
    history: History,
    service: QueueService,
    counts: Counts,
    period: float = SAMPLE_SECONDS,
) -> None:
    """Record every queue's depth each `period` seconds, until cancelled; less often
    (up to MAX_SAMPLE_GAP) when a sample itself takes more than SAMPLE_SHARE of that:
    listing 10,000 queues every 10 s kept 4 % of a core busy with nothing in them. A
    store that is down costs a sample, never the loop."""
    while True:
        began = time.monotonic()
        try:
            views = await overview(service, counts)
        except QueueError as error:
            log.debug("hopper: no depth sample: %s", error)
        else:
            history.keep_only({view.key for view in views})
            for view in views:
                history.depth(view.key, view.depth)
        await asyncio.sleep(next_sample_in(time.monotonic() - began, period))


def next_sample_in(took: float, period: float = SAMPLE_SECONDS) -> float:
    """Seconds from the end of a sample that took `took` to the next one."""
    return min(max(period, took / SAMPLE_SHARE), max(period, MAX_SAMPLE_GAP))
