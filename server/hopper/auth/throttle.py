"""Per-caller request rate limits: one token bucket per caller (an access key, or a
client address when authentication is off), so one runaway producer cannot starve the
others.

A bucket holds at most `rate` tokens (one second's worth: the burst a caller may send
at once) and refills continuously at `rate` tokens per second; a request takes one
token or is refused with SQS's RequestThrottled. Buckets idle long enough to be full
again are forgotten, so the table stays as small as the set of recent callers.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from hopper.wire.errors import SqsError

# Forget idle buckets at most this often (a sweep is one pass over the table).
_SWEEP_SECONDS = 60.0


@dataclass
class _Bucket:
    tokens: float
    at: float


class RateLimiter:
    def __init__(self, rate: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        if rate <= 0:
            raise ValueError(f"a rate limit must be positive, not {rate}")
        self.rate = rate
        self.capacity = rate
        self._clock = clock
        self._buckets: dict[str, _Bucket] = {}
        self._swept = clock()

    def take(self, caller: str) -> None:
        """Take one token from `caller`'s bucket; raises RequestThrottled when empty."""
        now = self._clock()
        self._sweep(now)
        bucket = self._buckets.get(caller)
        if bucket is None:
            bucket = self._buckets[caller] = _Bucket(self.capacity, now)
        bucket.tokens = min(self.capacity, bucket.tokens + (now - bucket.at) * self.rate)
        bucket.at = now
        if bucket.tokens < 1.0:
            raise SqsError(
                "RequestThrottled",
                f"Rate exceeded: at most {self.rate:g} requests per second are allowed "
                "for this caller.",
            )
        bucket.tokens -= 1.0

    def callers(self) -> int:
        """How many buckets are kept (tests check that idle ones go)."""
        return len(self._buckets)

    def _sweep(self, now: float) -> None:
        if now - self._swept < _SWEEP_SECONDS:
            return
        self._swept = now
        # A bucket idle for capacity/rate seconds is full: the same as a new one.
        idle = self.capacity / self.rate
        for caller in [c for c, b in self._buckets.items() if now - b.at >= idle]:
            del self._buckets[caller]
