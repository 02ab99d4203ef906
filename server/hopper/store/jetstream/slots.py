"""The JetStream store's dispatch slots (QueueStore.take_dispatch_slot): one entry per
queue in the queues bucket holding each taken slot's holder and lease end, changed by
compare-and-set, so a queue's maxConcurrency holds across every hopper process of a
cluster. The choice of slot is the ledger's rule (store/ledger/slots.py)."""

from __future__ import annotations

import orjson

from hopper.core.errors import StoreUnavailable
from hopper.core.model import QueueKey
from hopper.store.jetstream import edge
from hopper.store.jetstream.records import MAX_ROUNDS, slots_key
from hopper.store.ledger.slots import choose

Held = dict[int, tuple[str, float]]


class SlotEntries:
    def __init__(self, res: edge.Resources) -> None:
        self._kv = res.queues

    async def take(
        self, key: QueueKey, *, holder: str, slots: int, lease: float, at: float
    ) -> int | None:
        for _ in range(MAX_ROUNDS):
            held, revision = await self._read(key)
            slot = choose(held, holder, slots, at)
            if slot is None:
                return None
            held[slot] = (holder, at + lease)
            if await self._write(key, held, revision):
                return slot
        raise StoreUnavailable(f"dispatch slots of {key.name} too contended")

    async def give_back(self, key: QueueKey, *, holder: str, slot: int) -> None:
        for _ in range(MAX_ROUNDS):
            held, revision = await self._read(key)
            owner = held.get(slot)
            if owner is None or owner[0] != holder:
                return
            del held[slot]
            if await self._write(key, held, revision):
                return
        # Not given back: the slot's lease runs out instead.

    async def _read(self, key: QueueKey) -> tuple[Held, int]:
        raw, revision = await edge.get(self._kv, slots_key(key))
        if not raw:
            return {}, revision
        held = {int(slot): (h, float(end)) for slot, (h, end) in orjson.loads(raw).items()}
        return held, revision

    async def _write(self, key: QueueKey, held: Held, revision: int) -> bool:
        """Whether the compare-and-set on `revision` won."""
        value = orjson.dumps({str(slot): [h, end] for slot, (h, end) in held.items()})
        try:
            await edge.put(self._kv, slots_key(key), value, revision)
        except edge.Conflict:
            return False
        return True
