"""Bounds a queue keeps beyond its attributes: hopper's visibility floor, and the
estimate behind AWS's in-flight limit.

The floor is a server-wide setting (off by default): a lease shorter than it is raised
to it, because sub-minute leases turn any pause of a worker (a GC, a deploy, a slow
dependency) into a redelivery storm. What the core raised is reported through
`Adjustments`, which a caller passes in and reads afterwards (the wire turns it into
a response header).
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from hopper.core.clock import Clock
from hopper.core.model import QueueKey

# How long an in-flight count measured in the store is trusted (seconds); in between,
# this process adds its own claims and subtracts its own deletes.
IN_FLIGHT_REFRESH_SECONDS = 5.0


@dataclass
class Adjustments:
    """What a call changed in its request on the way through, for the caller to tell
    the client: `visibility_floor` is set when the floor raised a visibility timeout."""

    visibility_floor: float | None = None


def floored(timeout: float, floor: float | None, adjustments: Adjustments | None) -> float:
    """`timeout`, raised to `floor` when it is shorter (noted in `adjustments`)."""
    if floor is None or timeout >= floor:
        return timeout
    if adjustments is not None:
        adjustments.visibility_floor = floor
    return floor


class InFlightGauge:
    """An approximate count of each queue's in-flight messages, for AWS's in-flight
    limit without a count on every receive.

    The count is measured in the store when it is older than IN_FLIGHT_REFRESH_SECONDS;
    in between, claims and deletes of this process adjust it. Other processes' claims
    and leases running out are seen at the next measurement, so the limit holds
    approximately, as AWS says of its own ("approximately 120,000").
    """

    def __init__(self, limit: int, clock: Clock) -> None:
        self.limit = limit
        self._clock = clock
        # queue -> (count, when it was measured)
        self._known: dict[QueueKey, tuple[int, float]] = {}

    async def room(self, key: QueueKey, measure: Callable[[], Awaitable[int]]) -> int:
        """How many more messages of `key` may be put in flight now (0: at the limit)."""
        count, measured_at = self._known.get(key, (0, -math.inf))
        now = self._clock.time()
        if now - measured_at >= IN_FLIGHT_REFRESH_SECONDS:
            # Stamped before the await, so concurrent receives do not all measure.
            self._known[key] = (count, now)
            count = await measure()
            self._known[key] = (count, now)
        return max(self.limit - count, 0)

    def claimed(self, key: QueueKey, count: int) -> None:
        self._adjust(key, count)

    def released(self, key: QueueKey, count: int) -> None:
        self._adjust(key, -count)

    def forget(self, key: QueueKey) -> None:
        self._known.pop(key, None)

    def _adjust(self, key: QueueKey, delta: int) -> None:
        known = self._known.get(key)
        if known is not None and delta:
            self._known[key] = (max(known[0] + delta, 0), known[1])
