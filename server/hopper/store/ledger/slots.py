"""Dispatch slots held in one process (QueueStore.take_dispatch_slot): per queue, slot
-> (holder, lease end); the memory store's, and the JetStream store's until it keeps them
across processes. One process holds every slot, so this is a plain dict."""

from __future__ import annotations

from hopper.core.clock import Clock
from hopper.core.model import QueueKey


class DispatchSlots:
    _clock: Clock
    _slots: dict[QueueKey, dict[int, tuple[str, float]]]

    async def take_dispatch_slot(
        self, key: QueueKey, *, holder: str, slots: int, lease: float, now: float | None
    ) -> int | None:
        at = self._clock.time() if now is None else now
        held = self._slots.setdefault(key, {})
        free = None
        for slot in range(slots):
            owner = held.get(slot)
            if owner is not None and owner[0] == holder:
                free = slot
                break
            if free is None and (owner is None or owner[1] <= at):
                free = slot
        if free is not None:
            held[free] = (holder, at + lease)
        return free

    async def give_back_dispatch_slot(self, key: QueueKey, *, holder: str, slot: int) -> None:
        held = self._slots.get(key, {})
        owner = held.get(slot)
        if owner is not None and owner[0] == holder:
            del held[slot]
