"""Time as a parameter.

The core and the stores never read the wall clock directly. `SystemClock.now()`
returns None, which tells a store to use its own authority (the database clock for
Postgres, so several server processes agree); a `FakeClock` returns its own value, so
the contract suite runs both stores through time without sleeping.
"""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float | None:
        """The time to pass to the store, or None for "the store's own clock"."""
        ...

    def time(self) -> float:
        """The current time as epoch seconds, for callers that need a number."""
        ...


class SystemClock:
    def now(self) -> float | None:
        return None

    def time(self) -> float:
        return time.time()


class FakeClock:
    """A clock that moves only when told to."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self._now = start

    def now(self) -> float | None:
        return self._now

    def time(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += seconds
