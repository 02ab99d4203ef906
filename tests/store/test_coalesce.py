"""Coalescer: concurrent calls of one key share a statement; each caller gets its own
results, failures and cancellations stay with the callers they belong to."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from hopper.core import rounds
from hopper.store.postgres import coalesce
from hopper.store.postgres.coalesce import Coalescer


class Statements:
    """A fake statement runner that records each run and waits to be released, so a
    test decides when a statement "commits"."""

    def __init__(self) -> None:
        self.runs: list[tuple[str, list[int]]] = []
        self.release = asyncio.Event()
        self.started = asyncio.Event()
        self.fail_with: Exception | None = None

    async def run(self, key: str, items: list[int]) -> list[int]:
        self.runs.append((key, items))
        self.started.set()
        await self.release.wait()
        if self.fail_with is not None:
            raise self.fail_with
        return [item * 10 for item in items]


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_calls_arriving_while_a_statement_runs_share_the_next_one() -> None:
    statements = Statements()
    coalescer = Coalescer(statements.run, size=lambda item: 1, parallel=1)
    first = asyncio.create_task(coalescer.submit("q", [1]))
    await statements.started.wait()
    later = [asyncio.create_task(coalescer.submit("q", [n, n + 1])) for n in (2, 4, 6)]
    await settle()
    statements.release.set()
    assert await first == [10]
    assert [await task for task in later] == [[20, 30], [40, 50], [60, 70]]
    assert statements.runs == [("q", [1]), ("q", [2, 3, 4, 5, 6, 7])]


async def test_a_group_holds_at_most_max_items() -> None:
    statements = Statements()
    coalescer = Coalescer(statements.run, size=lambda item: 1, max_items=3, parallel=1)
    first = asyncio.create_task(coalescer.submit("q", [0]))
    await statements.started.wait()
    later = [asyncio.create_task(coalescer.submit("q", [n, n])) for n in (1, 2, 3)]
    await settle()
    statements.release.set()
    await asyncio.gather(first, *later)
    assert [items for _, items in statements.runs] == [[0], [1, 1], [2, 2], [3, 3]]


async def test_keys_do_not_wait_for_each_other_and_one_key_runs_parallel_statements() -> None:
    statements = Statements()
    coalescer = Coalescer(statements.run, size=lambda item: 1, parallel=2)
    tasks = []
    for key in ("a", "a", "a", "b"):
        tasks.append(asyncio.create_task(coalescer.submit(key, [1])))
        await settle()
    # two statements of "a" at once, the third call waits for one of them; "b" runs
    assert sorted(key for key, _ in statements.runs) == ["a", "a", "b"]
    statements.release.set()
    assert await asyncio.gather(*tasks) == [[10]] * 4
    assert len(statements.runs) == 4


async def test_a_failed_statement_fails_every_caller_of_its_group_only() -> None:
    statements = Statements()
    coalescer = Coalescer(statements.run, size=lambda item: 1, parallel=1)
    first = asyncio.create_task(coalescer.submit("q", [1]))
    await statements.started.wait()
    statements.fail_with = RuntimeError("database gone")
    statements.release.set()
    with pytest.raises(RuntimeError, match="database gone"):
        await first
    statements.fail_with = None
    assert await coalescer.submit("q", [2]) == [20]


async def test_a_caller_that_goes_away_cancels_nobody_else_and_its_items_are_sent() -> None:
    statements = Statements()
    coalescer = Coalescer(statements.run, size=lambda item: 1, parallel=1)
    first = asyncio.create_task(coalescer.submit("q", [1]))
    await statements.started.wait()
    gone = asyncio.create_task(coalescer.submit("q", [2]))
    stays = asyncio.create_task(coalescer.submit("q", [3]))
    await settle()
    gone.cancel()
    first.cancel()  # the caller of the running statement hangs up too
    statements.release.set()
    assert await stays == [30]
    assert statements.runs == [("q", [1]), ("q", [2, 3])]
    await coalescer.close()


class Holds:
    """A fake resource for a coalescer's hold: counts how often it is taken and let
    go, and can refuse to be taken."""

    def __init__(self, statements: Statements) -> None:
        self.statements = statements
        self.taken = 0
        self.let_go = 0
        self.refuse_with: Exception | None = None

    @contextlib.asynccontextmanager
    async def hold(
        self, key: str
    ) -> AsyncIterator[Callable[[str, list[int]], Awaitable[list[int]]]]:
        if self.refuse_with is not None:
            raise self.refuse_with
        self.taken += 1
        try:
            yield self.statements.run
        finally:
            self.let_go += 1


async def test_a_drain_holds_one_resource_for_the_groups_that_follow_one_another() -> None:
    statements = Statements()
    holds = Holds(statements)
    coalescer = Coalescer(size=lambda item: 1, parallel=1, hold=holds.hold)
    first = asyncio.create_task(coalescer.submit("q", [1]))
    await statements.started.wait()
    later = [asyncio.create_task(coalescer.submit("q", [n])) for n in (2, 3)]
    await settle()
    statements.release.set()
    assert await asyncio.gather(first, *later) == [[10], [20], [30]]
    assert statements.runs == [("q", [1]), ("q", [2, 3])]
    # both statements ran on one hold, let go once the groups stopped coming
    assert (holds.taken, holds.let_go) == (1, 1)


async def test_a_hold_that_cannot_be_taken_fails_the_waiting_callers() -> None:
    statements = Statements()
    holds = Holds(statements)
    holds.refuse_with = RuntimeError("no connection")
    coalescer = Coalescer(size=lambda item: 1, parallel=1, hold=holds.hold)
    with pytest.raises(RuntimeError, match="no connection"):
        await coalescer.submit("q", [1])
    assert statements.runs == []
    holds.refuse_with = None
    statements.release.set()
    assert await coalescer.submit("q", [2]) == [20]


async def send_twice(coalescer: Coalescer[str, int, int], item: int, turns: int) -> list[int]:
    """A caller that calls again `turns` turns of the loop after its answer (its way
    back to the client and the client's next request)."""
    first = await coalescer.submit("q", [item])
    for _ in range(turns):
        await asyncio.sleep(0)
    return first + await coalescer.submit("q", [item])


@pytest.mark.parametrize("regather", [True, False])
async def test_a_regathering_drain_waits_for_the_callers_it_answered(regather: bool) -> None:
    statements = Statements()
    coming_back = coalesce.every if regather else None
    coalescer = Coalescer(statements.run, size=lambda item: 1, parallel=2, regather=coming_back)
    callers = [asyncio.create_task(send_twice(coalescer, n, turns=n)) for n in (1, 2, 3)]
    await statements.started.wait()
    # The first statement takes 5 ms: the wait is counted in its durations (a time to
    # pass, not an event to await).
    await asyncio.sleep(0.005)
    statements.release.set()
    assert [await caller for caller in callers] == [[10, 10], [20, 20], [30, 30]]
    if regather:  # back one after another, they still go as one
        assert statements.runs == [("q", [1, 2, 3]), ("q", [1, 2, 3])]
    else:  # the first one back runs alone
        assert statements.runs[1] == ("q", [1])


async def test_a_regathering_drain_waits_a_bounded_time_for_callers_not_coming_back() -> None:
    statements = Statements()
    coalescer = Coalescer(statements.run, size=lambda item: 1, parallel=2, regather=coalesce.every)
    gone = asyncio.create_task(coalescer.submit("q", [1]))
    back = asyncio.create_task(send_twice(coalescer, 2, turns=0))
    await statements.started.wait()
    statements.release.set()
    assert await gone == [10]
    assert await back == [20, 20]  # answered without caller 1, after at most the bound
    assert statements.runs == [("q", [1, 2]), ("q", [2])]


def test_a_statement_under_a_millisecond_still_waits_on_uvloop() -> None:
    # uvloop's clock counts whole milliseconds: a statement timed by it took nothing,
    # and its drain waited for nobody.
    uvloop = pytest.importorskip("uvloop")

    async def main() -> list[tuple[str, list[int]]]:
        runs: list[tuple[str, list[int]]] = []

        async def run(key: str, items: list[int]) -> list[int]:
            runs.append((key, items))
            await asyncio.sleep(0.0003)  # the statement's round trip: a time to pass
            return items

        coalescer = Coalescer(run, size=lambda item: 1, parallel=2, regather=coalesce.every)
        await asyncio.gather(*(send_twice(coalescer, n, turns=n) for n in (1, 2, 3)))
        return runs

    assert uvloop.run(main()) == [("q", [1, 2, 3]), ("q", [1, 2, 3])]


async def test_a_regathering_drain_waits_only_for_the_callers_coming_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Two receives found nothing (their long polls wait): the one that took something
    # is not waited for with them, however long the wait would have been.
    monkeypatch.setattr(rounds, "ROUND_TRIPS", 1e9)
    monkeypatch.setattr(coalesce, "REGATHER_MAX_SECONDS", 3600.0)
    statements = Statements()
    coalescer = Coalescer(
        statements.run, size=lambda item: 1, parallel=2, regather=lambda got: got != [0]
    )
    answered = [asyncio.create_task(coalescer.submit("q", [n])) for n in (0, 0, 5)]
    await statements.started.wait()
    statements.release.set()
    assert await asyncio.gather(*answered) == [[0], [0], [50]]
    assert await asyncio.wait_for(coalescer.submit("q", [5]), 10) == [50]
    assert statements.runs == [("q", [0, 0, 5]), ("q", [5])]



async def test_a_drain_waits_before_its_statement_for_the_callers_expected(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Three deletes are on their way (the receives a claim answered): the first to
    # come does not go alone, the three go in one statement.
    monkeypatch.setattr(rounds, "ROUND_TRIPS", 1e9)
    monkeypatch.setattr(coalesce, "REGATHER_MAX_SECONDS", 3600.0)
    statements = Statements()
    statements.release.set()
    on_their_way = {"q": 0}
    coalescer = Coalescer(
        statements.run, size=lambda item: 1, parallel=1, expect=lambda key: on_their_way[key]
    )

    async def caller(item: int, turns: int) -> list[int]:
        for _ in range(turns):
            await asyncio.sleep(0)
        on_their_way["q"] -= 1
        return await coalescer.submit("q", [item])

    # a first statement, which the wait is measured by (none expected: no wait)
    assert await coalescer.submit("q", [0]) == [0]
    on_their_way["q"] = 3
    assert await asyncio.gather(caller(1, 0), caller(2, 3), caller(3, 6)) == [[10], [20], [30]]
    assert statements.runs == [("q", [0]), ("q", [1, 2, 3])]


async def test_a_drain_waits_a_bounded_time_for_expected_callers_not_coming() -> None:
    statements = Statements()
    statements.release.set()
    coalescer = Coalescer(statements.run, size=lambda item: 1, parallel=1, expect=lambda key: 5)
    assert await coalescer.submit("q", [0]) == [0]
    # five are expected, none comes: the statement goes after at most the bound
    assert await asyncio.wait_for(coalescer.submit("q", [1]), 1) == [10]
    assert statements.runs == [("q", [0]), ("q", [1])]
