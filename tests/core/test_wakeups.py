"""Wakeups: the per-queue registry long polls wait on."""

from __future__ import annotations

import asyncio

from hopper.core.model import QueueKey
from hopper.core.wakeups import Wakeups

KEY = QueueKey("000000000000", "q")
OTHER = QueueKey("000000000000", "other")


async def until_waiting(wakeups: Wakeups, key: QueueKey, count: int) -> None:
    # Yield to the loop until the waiters have registered (no timed sleeps).
    while wakeups.waiting(key) < count:
        await asyncio.sleep(0)


async def test_notify_wakes_every_current_waiter() -> None:
    wakeups = Wakeups()
    waiters = [asyncio.create_task(wakeups.wait(KEY, 30)) for _ in range(100)]
    await until_waiting(wakeups, KEY, 100)
    wakeups.notify(KEY)
    async with asyncio.timeout(5):
        assert await asyncio.gather(*waiters) == [True] * 100


async def test_wait_returns_false_on_timeout() -> None:
    assert await Wakeups().wait(KEY, 0.01) is False


async def test_notify_of_another_queue_does_not_wake() -> None:
    wakeups = Wakeups()
    waiter = asyncio.create_task(wakeups.wait(KEY, 0.05))
    await until_waiting(wakeups, KEY, 1)
    wakeups.notify(OTHER)
    assert await waiter is False


async def test_nothing_is_kept_for_queues_nobody_waits_on() -> None:
    wakeups = Wakeups()
    wakeups.notify(KEY)
    waiter = asyncio.create_task(wakeups.wait(KEY, 30))
    await until_waiting(wakeups, KEY, 1)
    wakeups.notify(KEY)
    await waiter
    await wakeups.wait(KEY, 0)
    assert wakeups.waiting(KEY) == 0
    assert wakeups._watches == {}


async def test_a_cancelled_waiter_leaves_nothing_behind() -> None:
    wakeups = Wakeups()
    waiter = asyncio.create_task(wakeups.wait(KEY, 30))
    await until_waiting(wakeups, KEY, 1)
    waiter.cancel()
    await asyncio.gather(waiter, return_exceptions=True)
    assert wakeups.waiting(KEY) == 0


async def test_notify_before_wait_is_not_remembered_by_plain_wait() -> None:
    wakeups = Wakeups()
    wakeups.notify(KEY)
    assert await wakeups.wait(KEY, 0.01) is False


async def test_a_watch_remembers_a_wake_up_that_came_between_waits() -> None:
    wakeups = Wakeups()
    with wakeups.watch(KEY) as watch:
        wakeups.notify(KEY)
        assert await watch.wait(0) is True
        assert await watch.wait(0) is False


async def test_notify_with_a_count_wakes_that_many_idle_waiters_longest_waiting_first() -> None:
    wakeups = Wakeups()
    waiters = [asyncio.create_task(wakeups.wait(KEY, 30)) for _ in range(5)]
    await until_waiting(wakeups, KEY, 5)
    await asyncio.sleep(0)  # every waiter is now inside its wait
    wakeups.notify(KEY, 2)
    await asyncio.wait(waiters, timeout=5, return_when=asyncio.FIRST_COMPLETED)
    await asyncio.sleep(0)
    assert [w.done() for w in waiters] == [True, True, False, False, False]
    wakeups.notify(KEY)
    async with asyncio.timeout(5):
        assert await asyncio.gather(*waiters) == [True] * 5


async def test_a_counted_wake_up_is_not_spent_on_a_waiter_already_woken() -> None:
    wakeups = Wakeups()
    waiters = [asyncio.create_task(wakeups.wait(KEY, 30)) for _ in range(3)]
    await until_waiting(wakeups, KEY, 3)
    await asyncio.sleep(0)
    wakeups.notify(KEY, 1)
    wakeups.notify(KEY, 1)  # before the first woken waiter has run
    await asyncio.wait(waiters, timeout=5, return_when=asyncio.FIRST_COMPLETED)
    await asyncio.sleep(0)
    assert [w.done() for w in waiters] == [True, True, False]
    wakeups.notify(KEY)
    await asyncio.gather(*waiters)


async def test_more_messages_than_idle_waiters_flags_the_busy_ones_too() -> None:
    wakeups = Wakeups()
    with wakeups.watch(KEY) as busy:  # between two looks: not waiting
        idle = asyncio.create_task(wakeups.wait(KEY, 30))
        await until_waiting(wakeups, KEY, 2)
        await asyncio.sleep(0)
        wakeups.notify(KEY, 2)
        assert await idle is True
        assert await busy.wait(0) is True  # remembered for its next wait
