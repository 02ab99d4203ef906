"""Store contract: a queue's dispatch slots (Hopper.Dispatch's maxConcurrency across
processes), leases that a holder renews and that free themselves when they run out."""

from __future__ import annotations

import pytest

from hopper.core.clock import FakeClock
from hopper.core.store import QueueStore

from .factories import key
from .stores import STORES

pytestmark = pytest.mark.parametrize("store", STORES, indirect=True)


async def take(store: QueueStore, clock: FakeClock, holder: str, slots: int = 2) -> int | None:
    return await store.take_dispatch_slot(
        key(), holder=holder, slots=slots, lease=10, now=clock.now()
    )


async def test_slots_go_to_distinct_holders_until_all_are_held(
    store: QueueStore, clock: FakeClock
) -> None:
    assert await take(store, clock, "a") == 0
    assert await take(store, clock, "b") == 1
    assert await take(store, clock, "c") is None


async def test_a_holder_taking_again_renews_its_own_slot(
    store: QueueStore, clock: FakeClock
) -> None:
    assert await take(store, clock, "a") == 0
    assert await take(store, clock, "b") == 1
    clock.advance(9)
    assert await take(store, clock, "b") == 1
    clock.advance(2)
    # a's lease ran out, b's was renewed: c gets a's slot
    assert await take(store, clock, "c") == 0
    assert await take(store, clock, "d") is None


async def test_a_slot_given_back_is_free_at_once_but_only_by_its_holder(
    store: QueueStore, clock: FakeClock
) -> None:
    assert await take(store, clock, "a", slots=1) == 0
    await store.give_back_dispatch_slot(key(), holder="b", slot=0)
    assert await take(store, clock, "b", slots=1) is None
    await store.give_back_dispatch_slot(key(), holder="a", slot=0)
    assert await take(store, clock, "b", slots=1) == 0
