"""A graceful stop on SIGTERM (and Ctrl-C).

uvicorn, on the signal, stops accepting connections and waits for the requests in
progress (at most `GRACE_SECONDS`, then it cancels them). A long poll is a request
that may stay open for 20 seconds, so the signal must also reach the queue core:
`QueueService.drain` makes every long poll answer at once with what it has (an empty
receive, as at the end of its wait time), and the process exits promptly.

Then the app's lifespan stops its own work (`Shutdown`): each step is bounded, and all
of them together, so that a store that stopped answering or a task slow to end cannot
keep the process past the 10 s a supervisor usually allows between SIGTERM and SIGKILL
(docker stop's default). Nothing acknowledged depends on a step finishing: a message
sent was written before its answer, a lease not handed back ends at its deadline.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

# How long uvicorn waits for requests in progress once it has stopped accepting.
GRACE_SECONDS = 10

# The lifespan's whole shutdown, once uvicorn's connections have closed.
SHUTDOWN_SECONDS = 6.0
# What a step is given when the budget is spent: time to close a connection at least.
_LAST_STEP_SECONDS = 0.5

log = logging.getLogger("hopper")

_SIGNALS = (signal.SIGTERM, signal.SIGINT)


@contextmanager
def drained_on_signals(drain: Callable[[], None]) -> Iterator[None]:
    """Call `drain` (on the running loop) when SIGTERM or SIGINT arrives, then pass the
    signal on to the handler installed before (uvicorn's, which starts its shutdown).
    Signals can be caught only in the main thread; elsewhere (an app under test in a
    thread) this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    loop = asyncio.get_running_loop()
    previous = {sign: signal.getsignal(sign) for sign in _SIGNALS}

    def handle(sign: int, frame: FrameType | None) -> None:
        loop.call_soon_threadsafe(drain)
        _pass_on(previous[signal.Signals(sign)], sign, frame)

    for sign in _SIGNALS:
        signal.signal(sign, handle)
    try:
        yield
    finally:
        for sign, handler in previous.items():
            signal.signal(sign, handler)


def _pass_on(handler: Any, sign: int, frame: FrameType | None) -> None:
    # uvicorn installs a callable; SIG_DFL or SIG_IGN would mean nobody serves here.
    if callable(handler):
        handler(sign, frame)


class Shutdown:
    """The steps of a shutdown, in order, each cut off when the budget runs out; a step
    cut off or failing is logged by name and the next one runs."""

    def __init__(self, seconds: float = SHUTDOWN_SECONDS) -> None:
        self._end = time.monotonic() + seconds

    async def step(self, name: str, work: Awaitable[object]) -> None:
        left = max(self._end - time.monotonic(), _LAST_STEP_SECONDS)
        try:
            async with asyncio.timeout(left):
                await work
        except TimeoutError:
            log.warning("hopper: shutdown: %s did not finish within %.1f s; going on", name, left)
        except Exception as error:  # a step's failure must not skip the steps after it
            log.warning("hopper: shutdown: %s failed (%s); going on", name, error)
