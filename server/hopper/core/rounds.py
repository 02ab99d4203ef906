"""Rounds of gathered work: what callers of one key (a queue) ask while its round is on
its way (a publish of plain sends, a group commit of steps, a statement of sends or
claims) goes together in its next round.

Without a pause between rounds, 16 callers split into halves taking turns: the callers
one round answered come back while the next round, carrying the few that arrived
meanwhile, is on its way. A round costs about as much for sixteen callers as for one
(a round trip, a commit, a write of a queue's ledger or a replicated publish), so the
next round waits for the callers the last one answered to be back, at most a few of its
round trips (bench/README.md: branches jssend, js3 and pggather). The JetStream store
and the PostgreSQL store's coalescer both pause so.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Hashable

# A round waits at most this many of the last round's durations, and never longer than
# MAX_SECONDS (a round slowed by a leader election must not hold the next for seconds).
ROUND_TRIPS = 4.0
MAX_SECONDS = 0.01


class Regather:
    """Per key, the pause before its next round: how many callers it waits for, and the
    future the arrival of the last of them sets."""

    def __init__(self, min_callers: int, *, max_seconds: float | None = None) -> None:
        # A round that answered fewer callers than this does not make the next wait
        # (a lone caller never waits).
        self._min_callers = min_callers
        self._max_seconds = max_seconds  # None: MAX_SECONDS
        self._awaited: dict[Hashable, tuple[int, asyncio.Future[None]]] = {}

    def pausing(self, key: Hashable) -> bool:
        """Whether a round of `key` waits for its callers now (the round after it takes
        what arrives meanwhile)."""
        return key in self._awaited

    def arrived(self, key: Hashable, waiting: int) -> None:
        """A caller arrived: `waiting` callers now wait for the key's next round."""
        awaited = self._awaited.get(key)
        if awaited is not None and waiting >= awaited[0] and not awaited[1].done():
            awaited[1].set_result(None)

    async def pause(self, key: Hashable, answered: int, waiting: int, took: float) -> None:
        """Before the key's next round: wait until the `answered` callers of the last
        (which took `took` seconds, by time.monotonic: uvloop's loop.time() counts whole
        milliseconds, so a round under one took 0) are back besides the `waiting` ones.
        Where rounds of a key run side by side and one pauses already, it waits for these
        callers too, and this one returns at once."""
        if answered < self._min_callers:
            return
        if (awaited := self._awaited.get(key)) is not None:
            self._awaited[key] = (awaited[0] + answered, awaited[1])
            return
        back: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._awaited[key] = (answered + waiting, back)
        limit = MAX_SECONDS if self._max_seconds is None else self._max_seconds
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(back, min(ROUND_TRIPS * took, limit))
        finally:
            del self._awaited[key]
