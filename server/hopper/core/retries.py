"""Retries with exponential backoff and jitter (`Hopper.RetryPolicy`), a hopper extension.

On SQS a message whose lease ends without a delete is visible again at once; with a
retry policy it becomes visible again only `delay_after(receives)` seconds after its
lease ends (ran out, or released with ChangeMessageVisibility 0). Every store applies
it inside its own atomic claim or release; the arithmetic is here, once.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Literal

Jitter = Literal["full", "equal", "none"]
JITTERS: tuple[Jitter, ...] = ("full", "equal", "none")
# The longest backoff a policy may name: 12 hours, the longest visibility timeout.
MAX_DELAY_SECONDS = 43_200.0


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Base and maximum delay in seconds, and how the delay is spread."""

    base: float
    maximum: float
    jitter: Jitter = "full"

    def ceiling(self, receives: int) -> float:
        """min(maximum, base * 2^(receives - 1)): the delay before jitter."""
        exponent = max(receives - 1, 0)
        if exponent >= 64:  # 2**64 * base overflows no float, but says nothing more
            return self.maximum
        return min(self.maximum, self.base * (2.0**exponent))

    def delay_after(self, receives: int, rng: random.Random | None = None) -> float:
        """Seconds a message stays hidden after a lease (its `receives`-th) ended without
        a delete: full jitter draws from [0, ceiling], equal from [ceiling/2, ceiling]."""
        ceiling = self.ceiling(receives)
        draw = (rng or _RANDOM).random
        if self.jitter == "full":
            return draw() * ceiling
        if self.jitter == "equal":
            return ceiling / 2 + draw() * ceiling / 2
        return ceiling


_RANDOM = random.Random()
