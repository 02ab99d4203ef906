"""Wakeups: the per-queue registry long polls wait on."""

from __future__ import annotations

import asyncio

from hopper.core.model import Delivery, QueueKey, StoredMessage
from hopper.core.wakeups import EMPTY_TRUST_SECONDS, Wakeups

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
    assert wakeups.watched() == []


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


async def watching(wakeups: Wakeups, capacity: int, count: int) -> list[asyncio.Task[bool]]:
    """`count` long-poll-like waiters of KEY, each taking `capacity` messages a look,
    every one inside its wait when this returns."""

    async def waiter() -> bool:
        with wakeups.watch(KEY, capacity) as watch:
            return await watch.wait(30)

    tasks = [asyncio.create_task(waiter()) for _ in range(count)]
    await until_waiting(wakeups, KEY, count)
    await asyncio.sleep(0)
    return tasks


async def settled(tasks: list[asyncio.Task[bool]]) -> list[bool]:
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    return [task.done() for task in tasks]


async def test_messages_go_to_as_few_waiters_as_will_take_them() -> None:
    wakeups = Wakeups()
    tasks = await watching(wakeups, capacity=10, count=3)
    wakeups.notify(KEY, 5)
    assert await settled(tasks) == [True, False, False]
    wakeups.notify(KEY, 12)  # one waiter takes 10, the next the other 2
    assert await settled(tasks) == [True, True, True]


async def test_a_woken_waiter_that_has_not_looked_takes_later_messages_up_to_its_capacity() -> (
    None
):
    wakeups = Wakeups()
    tasks = await watching(wakeups, capacity=2, count=3)
    wakeups.notify(KEY, 1)
    wakeups.notify(KEY, 1)  # the first waiter's look takes this one too
    assert await settled(tasks) == [True, False, False]
    for task in tasks[1:]:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)

    tasks = await watching(wakeups, capacity=2, count=3)
    wakeups.notify(KEY, 1)
    wakeups.notify(KEY, 1)
    wakeups.notify(KEY, 1)  # beyond the first waiter's room: the second is woken
    assert await settled(tasks) == [True, True, False]
    tasks[2].cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def test_a_woken_waiter_that_goes_away_without_looking_hands_its_messages_on() -> None:
    wakeups = Wakeups()
    tasks = await watching(wakeups, capacity=10, count=2)
    wakeups.notify(KEY, 3)
    tasks[0].cancel()  # woken, then cancelled before it ran: it never looks
    await asyncio.gather(tasks[0], return_exceptions=True)
    async with asyncio.timeout(5):
        assert await tasks[1] is True


class Ticks:
    """A hand-driven monotonic clock."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_look_that_found_nothing_is_trusted_for_a_moment() -> None:
    ticks = Ticks()
    wakeups = Wakeups(now=ticks)
    assert not wakeups.known_empty(KEY)
    wakeups.found_nothing(KEY, wakeups.looking())
    assert wakeups.known_empty(KEY)
    assert not wakeups.known_empty(OTHER)
    ticks.now += EMPTY_TRUST_SECONDS + 0.01
    assert not wakeups.known_empty(KEY)


def test_a_wake_up_ends_what_an_empty_look_told() -> None:
    wakeups = Wakeups()
    wakeups.found_nothing(KEY, wakeups.looking())
    wakeups.notify(KEY, 1)
    assert not wakeups.known_empty(KEY)


def test_a_look_overtaken_by_a_wake_up_is_not_remembered() -> None:
    wakeups = Wakeups()
    stamp = wakeups.looking()
    wakeups.notify(KEY, 1)  # a send committed while the look ran: it may have missed it
    wakeups.found_nothing(KEY, stamp)
    assert not wakeups.known_empty(KEY)
    wakeups.found_nothing(KEY, wakeups.looking())
    assert wakeups.known_empty(KEY)


def test_looks_begun_before_forgotten_wake_ups_are_not_remembered() -> None:
    wakeups = Wakeups(limit=2)
    stamp = wakeups.looking()
    wakeups.notify(KEY, 1)
    wakeups.notify(OTHER, 1)
    wakeups.notify(QueueKey("000000000000", "third"), 1)  # over the limit: forgets them
    wakeups.found_nothing(KEY, stamp)
    assert not wakeups.known_empty(KEY)


# --- messages handed to waiters as they arrive (core/handoff.py) -----------------------


def _delivery(message_id: str = "m") -> Delivery:
    stored = StoredMessage(message_id, "body", {}, None, sent_at=1.0)
    return Delivery(stored, token=1, receive_count=1, first_received_at=1.0, visible_at=31.0)


async def _waiting_watch(
    wakeups: Wakeups, capacity: int, lease: float | None, timeout: float = 30
) -> tuple[asyncio.Task[list[Delivery]], asyncio.Event]:
    """A holder waiting on a watch of KEY, which returns what was handed to it."""
    entered = asyncio.Event()

    async def hold() -> list[Delivery]:
        with wakeups.watch(KEY, capacity=capacity, lease=lease) as watch:
            entered.set()
            await watch.wait(timeout)
            return watch.take()

    task = asyncio.create_task(hold())
    await entered.wait()
    await asyncio.sleep(0)  # into watch.wait
    return task, entered


async def test_offers_go_to_idle_takers_longest_waiting_first_up_to_their_capacity() -> None:
    wakeups = Wakeups()
    first, _ = await _waiting_watch(wakeups, capacity=2, lease=30.0)
    _looker, _ = await _waiting_watch(wakeups, capacity=10, lease=None)
    second, _ = await _waiting_watch(wakeups, capacity=10, lease=30.0)
    assert wakeups.takers(KEY)
    offers = wakeups.offer(KEY, 5)
    assert [count for _, count in offers] == [2, 3]
    assert not wakeups.takers(KEY)  # offered watches are not idle
    assert wakeups.offer(KEY, 5) == []
    for watch, count in offers:
        assert watch.hand([_delivery(f"m{i}") for i in range(count)])
    async with asyncio.timeout(5):
        assert [d.message.id for d in await first] == ["m0", "m1"]
        assert [d.message.id for d in await second] == ["m0", "m1", "m2"]
    _looker.cancel()


async def test_an_offered_watch_waits_for_its_messages_past_its_timeout() -> None:
    wakeups = Wakeups()
    holder, _ = await _waiting_watch(wakeups, capacity=1, lease=30.0, timeout=0.0)
    [(watch, _)] = wakeups.offer(KEY, 1)
    for _ in range(20):  # the timeout fires; the offer holds the watch
        await asyncio.sleep(0)
    assert not holder.done()
    wakeups.notify(KEY)  # a wake-up meanwhile does not end the wait either
    for _ in range(20):
        await asyncio.sleep(0)
    assert not holder.done()
    watch.hand([_delivery()])
    async with asyncio.timeout(5):
        assert [d.message.id for d in await holder] == ["m"]


async def test_a_withdrawn_offer_wakes_the_watch_to_look() -> None:
    wakeups = Wakeups()
    holder, _ = await _waiting_watch(wakeups, capacity=1, lease=30.0)
    [(watch, _)] = wakeups.offer(KEY, 1)
    assert watch.hand([])
    async with asyncio.timeout(5):
        assert await holder == []


async def test_a_notify_does_not_hand_offered_watches_messages_twice() -> None:
    wakeups = Wakeups()
    offered, _ = await _waiting_watch(wakeups, capacity=1, lease=30.0)
    other, _ = await _waiting_watch(wakeups, capacity=1, lease=30.0)
    [(watch, _)] = wakeups.offer(KEY, 1)
    wakeups.notify(KEY, 1)  # a message for a look goes to the idle watch
    async with asyncio.timeout(5):
        assert await other == []
    assert not offered.done()
    watch.hand([_delivery()])
    async with asyncio.timeout(5):
        assert len(await offered) == 1


async def test_a_watch_whose_holder_left_refuses_what_is_handed() -> None:
    wakeups = Wakeups()
    holder, _ = await _waiting_watch(wakeups, capacity=1, lease=30.0)
    [(watch, _)] = wakeups.offer(KEY, 1)
    holder.cancel()
    await asyncio.gather(holder, return_exceptions=True)
    assert wakeups.waiting(KEY) == 0
    assert watch.hand([_delivery()]) is False  # the sender's to release
    assert watch.take() == []


async def test_a_departure_ends_the_wait_and_is_watched_only_while_the_watch_is_held() -> None:
    wakeups = Wakeups()
    departed, watching, stopped = asyncio.Event(), asyncio.Event(), asyncio.Event()
    calls = []

    async def gone() -> None:
        calls.append(True)
        watching.set()
        try:
            await departed.wait()
        except asyncio.CancelledError:
            stopped.set()
            raise

    with wakeups.watch(KEY) as watch:
        watch.interrupt_when(gone)
        watch.interrupt_when(gone)  # one watcher however often asked
        await watching.wait()
        departed.set()
        assert await watch.wait(20) is True
        assert watch.interrupted
    assert calls == [True]

    departed.clear()
    watching.clear()
    with wakeups.watch(KEY) as watch:
        watch.interrupt_when(gone)
        await watching.wait()
    async with asyncio.timeout(5):
        await stopped.wait()
    assert not watch.interrupted


async def test_a_wake_up_is_not_promised_to_a_watch_already_handed_its_messages() -> None:
    # A poll handed deliveries returns them without looking: a wake-up for a message
    # left for a look must reach another waiter, here one busy between two looks.
    wakeups = Wakeups()
    handed, _ = await _waiting_watch(wakeups, capacity=1, lease=30.0)
    with wakeups.watch(KEY) as busy:
        [(watch, _)] = wakeups.offer(KEY, 1)
        assert watch.hand([_delivery()])
        wakeups.notify(KEY, 1)
        assert await busy.wait(0) is True
    async with asyncio.timeout(5):
        assert len(await handed) == 1
