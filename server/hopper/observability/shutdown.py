"""A graceful stop on SIGTERM (and Ctrl-C).

uvicorn, on the signal, stops accepting connections and waits for the requests in
progress (at most `GRACE_SECONDS`, then it cancels them). A long poll is a request
that may stay open for 20 seconds, so the signal must also reach the queue core:
`QueueService.drain` makes every long poll answer at once with what it has (an empty
receive, as at the end of its wait time), and the process exits promptly.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

# How long uvicorn waits for requests in progress once it has stopped accepting.
GRACE_SECONDS = 10

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
