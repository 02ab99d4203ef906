"""Dispatch slots (QueueStore.take_dispatch_slot): per queue, slot -> (holder, lease
end). `choose` is the rule; `DispatchSlots` keeps the map in one process (the memory
store: one process holds every slot, so a plain dict), the JetStream store keeps it in
an entry changed by compare-and-set (store/jetstream/slots.py)."""

from __future__ import annotations

from hopper.core.clock import Clock
from hopper.core.model import QueueKey


def choose(held: dict[int, tuple[str, float]], holder: str, slots: int, at: float) -> int | None:
    """Which of `slots` slots `holder` takes at `at`, given who holds which (holder,
    lease end): the one it holds already, else the first free or lapsed, else None.
    One rule for every store that keeps its slots as such a map."""
    free = None
    for slot in range(slots):
        owner = held.get(slot)
        if owner is not None and owner[0] == holder:
            return slot
        if free is None and (owner is None or owner[1] <= at):
            free = slot
    return free


class DispatchSlots:
    _clock: Clock
    _slots: dict[QueueKey, dict[int, tuple[str, float]]]

    async def take_dispatch_slot(
        self, key: QueueKey, *, holder: str, slots: int, lease: float, now: float | None
    ) -> int | None:
        at = self._clock.time() if now is None else now
        held = self._slots.setdefault(key, {})
        free = choose(held, holder, slots, at)
        if free is not None:
            held[free] = (holder, at + lease)
        return free

    async def give_back_dispatch_slot(self, key: QueueKey, *, holder: str, slot: int) -> None:
        held = self._slots.get(key, {})
        owner = held.get(slot)
        if owner is not None and owner[0] == holder:
            del held[slot]
