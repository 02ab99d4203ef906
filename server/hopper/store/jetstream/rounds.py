"""Rounds of gathered work: what callers of one queue ask while its round is on its way
(a publish of plain sends, a group commit of steps) goes together in its next round.

Without a pause between rounds, 16 callers split into halves taking turns: the callers
one round answered come back while the next round, carrying the few that arrived
meanwhile, is on its way. A round costs about as much for sixteen callers as for one
(a round trip, a write of the queue's ledger or a replicated publish), so the next
round waits for the callers the last one answered to be back, at most a few of its
round trips (bench/README.md: branches jssend and js3).
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
    """Per key (a queue), the pause before its next round: how many callers it waits
    for, and the future the arrival of the last of them sets."""

    def __init__(self, min_callers: int) -> None:
        # A round that answered fewer callers than this does not make the next wait
        # (a lone caller never waits).
        self._min_callers = min_callers
        self._awaited: dict[Hashable, tuple[int, asyncio.Future[None]]] = {}

    def arrived(self, key: Hashable, waiting: int) -> None:
        """A caller arrived: `waiting` callers now wait for the key's next round."""
        awaited = self._awaited.get(key)
        if awaited is not None and waiting >= awaited[0] and not awaited[1].done():
            awaited[1].set_result(None)

    async def pause(self, key: Hashable, answered: int, waiting: int, took: float) -> None:
        """Before the key's next round: wait until the `answered` callers of the last
        (which took `took` seconds, by time.monotonic: uvloop's loop.time() counts whole
        milliseconds, so a round under one took 0) are back besides the `waiting` ones."""
        if answered < self._min_callers:
            return
        back: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._awaited[key] = (answered + waiting, back)
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(back, min(ROUND_TRIPS * took, MAX_SECONDS))
        finally:
            del self._awaited[key]
