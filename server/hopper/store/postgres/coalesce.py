"""Concurrent calls that can share one statement, run as one.

Sixteen clients each sending one message cost sixteen statements, sixteen commits and
sixteen foreign-key locks of the same queue row: on PostgreSQL a single-message send
was bound by per-statement work, not by the rows. A `Coalescer` lets the first call of
a key run at once; calls of that key arriving while its statement runs wait, and go
together in the next one (at most `max_items` items or `max_bytes` bytes each), so a
busy queue pays one round trip per group instead of per call, and an idle one pays
nothing extra. Each caller still gets its own results, only after its group's
statement has committed.

The statements run in their own tasks: a caller that goes away (a client that hung up)
does not cancel the others' statement, and its items are sent all the same, as a
request the server had already begun would be.

A busy key's statements follow one another in one task (a drain). With `hold`, the
drain takes what its statements run on once, for as long as groups keep coming: a
pool connection held across a busy spell instead of acquired and released per
statement (asyncpg's acquire and release cost the server about as much CPU as the
round trip itself).

With `regather`, a statement that answered several callers makes its drain wait for
them before the next one (core/rounds.py): they are about to call again, and without the
wait sixteen callers split into two halves taking turns, each statement carrying eight.
`regather` says which callers are coming back, by their results (a receive that found
nothing goes to its long poll instead). With `expect`, a drain also waits before a
statement for the callers `expect(key)` says are on their way (the deletes of the
receives a shared claim just answered), the same way and as long.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Awaitable, Callable, Hashable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Generic, TypeVar

from hopper.core.rounds import Regather

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")
R = TypeVar("R")

# What a drain runs a group with: the key and the group's items, their results.
Run = Callable[[K, list[T]], Awaitable[list[R]]]

# After a statement that answered this many callers or more, a regathering drain waits
# until as many callers wait again (and those that came meanwhile), at most a few of
# the statement's own durations and never longer than REGATHER_MAX_SECONDS: a caller
# that is not coming back soon (a sender at a fixed rate) costs the others that much
# latency. A lone caller never waits.
REGATHER_MIN_CALLERS = 2
REGATHER_MAX_SECONDS = 0.004


class _Group(Generic[T, R]):
    # (Not a dataclass: mypyc compiles no generic one.)
    def __init__(self) -> None:
        self.items: list[T] = []
        self.size = 0
        # one (count of items, future of their results) per caller, in order
        self.callers: list[tuple[int, asyncio.Future[list[R]]]] = []


class Coalescer(Generic[K, T, R]):
    def __init__(
        self,
        run: Run[K, T, R] | None = None,
        *,
        size: Callable[[T], int],
        max_items: int = 200,
        max_bytes: int = 2 * 1024 * 1024,
        parallel: int = 2,
        hold: Callable[[K], AbstractAsyncContextManager[Run[K, T, R]]] | None = None,
        regather: Callable[[list[R]], bool] | None = None,
        expect: Callable[[K], int] | None = None,
    ) -> None:
        """`run` runs a group; or, given `hold` instead, a drain runs its groups with
        the run that `hold(key)` yields, held while groups keep coming."""
        if hold is None:
            if run is None:
                raise TypeError("a Coalescer takes run or hold")
            hold = _Bare(run)
        self._hold = hold
        self._size = size
        self._max_items = max_items
        self._max_bytes = max_bytes
        # Statements of one key in flight at once: two overlap one's commit with the
        # next one's work, without spreading a queue's sends over the whole pool.
        self._parallel = parallel
        self._waiting: dict[K, deque[_Group[T, R]]] = {}
        self._running: dict[K, int] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._coming_back = regather
        self._expect = expect
        # per key, how long its last statement took (the measure of a wait: Regather)
        self._took: dict[K, float] = {}
        self._rounds = Regather(REGATHER_MIN_CALLERS, max_seconds=REGATHER_MAX_SECONDS)

    async def submit(self, key: K, items: Sequence[T]) -> list[R]:
        """Run `items` in a statement of `key`, alone or with others' items; their
        results, in order."""
        future: asyncio.Future[list[R]] = asyncio.get_running_loop().create_future()
        self._join(key, list(items), future)
        if self._rounds.pausing(key):  # the pausing drain runs this call's group
            self._rounds.arrived(key, self._callers_waiting(key))
        elif self._running.get(key, 0) < self._parallel:
            self._running[key] = self._running.get(key, 0) + 1
            task = asyncio.create_task(self._drain(key), name="hopper-coalesced")
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return await future

    async def close(self) -> None:
        """Wait for the statements already started (their callers are owed answers)."""
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def _join(self, key: K, items: list[T], future: asyncio.Future[list[R]]) -> None:
        groups = self._waiting.setdefault(key, deque())
        size = sum(self._size(item) for item in items)
        last = groups[-1] if groups else None
        if (
            last is None
            or len(last.items) + len(items) > self._max_items
            or last.size + size > self._max_bytes
        ):
            last = _Group()
            groups.append(last)
        last.items.extend(items)
        last.size += size
        last.callers.append((len(items), future))

    async def _drain(self, key: K) -> None:
        try:
            # Groups may arrive while a hold is let go (an await): look again after it.
            while self._waiting.get(key) and not self._rounds.pausing(key):
                try:
                    async with self._hold(key) as run:
                        await self._settle_all(key, run)
                except Exception as error:  # no hold: the waiting groups fail with it
                    self._fail_waiting(key, error)
                except BaseException:
                    self._fail_waiting(key, None)
                    raise
        finally:
            self._running[key] -= 1
            if not self._running[key]:
                del self._running[key]

    async def _settle_all(self, key: K, run: Run[K, T, R]) -> None:
        expected = False
        while groups := self._waiting.get(key):
            if self._rounds.pausing(key):
                return  # another drain waits for these callers' fellows and runs them
            if self._expect is not None and not expected:
                # once a statement: callers that did not come in time go in the next
                expected = True
                waiting = self._callers_waiting(key)
                await self._rounds.pause(key, self._expect(key), waiting, self._took.get(key, 0))
                continue
            expected = False
            group = groups.popleft()
            if not groups:
                del self._waiting[key]
            # not the loop's clock: uvloop's counts whole milliseconds, and a statement
            # under one would never wait
            began = time.monotonic()
            answered = await self._settle(key, group, run)
            took = time.monotonic() - began
            if self._expect is not None:
                self._took[key] = took
            await self._rounds.pause(key, answered, self._callers_waiting(key), took)

    def _callers_waiting(self, key: K) -> int:
        return sum(len(group.callers) for group in self._waiting.get(key, ()))

    def _fail_waiting(self, key: K, error: Exception | None) -> None:
        """Fail (None: cancel) the callers of `key`'s groups not yet run."""
        for group in self._waiting.pop(key, ()):
            for _, future in group.callers:
                if future.done():
                    continue
                if error is None:
                    future.cancel()
                else:
                    future.set_exception(error)
                    future.add_done_callback(_consume)

    async def _settle(self, key: K, group: _Group[T, R], run: Run[K, T, R]) -> int:
        """Run `group`; the callers it answered that are coming back (with `regather`)."""
        try:
            results = await run(key, group.items)
        except Exception as error:  # every caller of the group gets the failure
            for _, future in group.callers:
                if not future.done():
                    future.set_exception(error)
                    future.add_done_callback(_consume)  # for a caller that is gone
            return 0
        except BaseException:  # the statement's task was cancelled: so are its callers
            for _, future in group.callers:
                future.cancel()
            raise
        start, coming_back = 0, 0
        for count, future in group.callers:
            if not future.done():  # (a caller that hung up is not coming back)
                share = results[start : start + count]
                future.set_result(share)
                coming_back += self._coming_back is not None and self._coming_back(share)
            start += count
        return coming_back


class _Bare(Generic[K, T, R]):
    """The hold of a coalescer without one: `run` itself, nothing held. (A class, not
    an asynccontextmanager: mypyc compiles no async generator.)"""

    def __init__(self, run: Run[K, T, R]) -> None:
        self._run = run

    def __call__(self, key: K) -> _Bare[K, T, R]:
        return self

    async def __aenter__(self) -> Run[K, T, R]:
        return self._run

    async def __aexit__(self, *exc_info: object) -> None:
        return None


def every(results: list[Any]) -> bool:
    """A `regather` for callers that always come back (senders)."""
    return True


def _consume(future: asyncio.Future[Any]) -> None:
    with contextlib.suppress(BaseException):
        future.exception()
