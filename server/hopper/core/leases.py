"""Deletes and visibility changes at the store, as the receipt mode has them done.

The service checks a call's rules (timeout ranges, the visibility floor) and turns
each result into an answer (core/outcomes.py); this module does the store's part: one
store call per batch and, in AWS receipt mode, another for the receipts a newer
delivery superseded, presented again with their message's current token, since AWS
acts on a message whatever delivery its receipt came from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from hopper.core import limits, outcomes
from hopper.core.model import QueueKey, Receipt, ReceiptResult, VisibilityChange
from hopper.core.outcomes import ReceiptMode
from hopper.core.store import QueueStore

# AWS's limit on a message's total visibility, counted from its delivery's receive.
_MAX_TOTAL = float(limits.MAX_TOTAL_VISIBILITY_SECONDS)


class Leases:
    def __init__(self, store: QueueStore, mode: ReceiptMode) -> None:
        self.store = store
        self.mode = mode

    async def delete(
        self, key: QueueKey, receipts: Sequence[Receipt], *, now: float | None
    ) -> list[ReceiptResult]:
        """store.delete; a FIFO queue refuses expired receipts (AWS does)."""
        results = await self.store.delete(key, receipts, refuse_expired=key.is_fifo, now=now)
        if not outcomes.chases(self.mode, fifo=key.is_fifo):
            return results

        async def reissue(stale: Mapping[int, int]) -> dict[int, ReceiptResult]:
            again = [Receipt(receipts[i].message_id, token) for i, token in stale.items()]
            done = await self.store.delete(key, again, refuse_expired=False, now=now)
            return dict(zip(stale, done, strict=True))

        return await outcomes.on_current_delivery(results, reissue)

    async def change_visibility(
        self, key: QueueKey, changes: Sequence[VisibilityChange], *, now: float | None
    ) -> list[ReceiptResult]:
        """store.change_visibility under AWS's total visibility limit; a FIFO queue
        refuses expired receipts."""
        results = await self.store.change_visibility(
            key, changes, refuse_expired=key.is_fifo, now=now, max_total=_MAX_TOTAL
        )
        if not outcomes.chases(self.mode, fifo=key.is_fifo):
            return results

        async def reissue(stale: Mapping[int, int]) -> dict[int, ReceiptResult]:
            again = [
                replace(changes[i], receipt=Receipt(changes[i].receipt.message_id, token))
                for i, token in stale.items()
            ]
            done = await self.store.change_visibility(
                key, again, refuse_expired=False, now=now, max_total=_MAX_TOTAL
            )
            return dict(zip(stale, done, strict=True))

        return await outcomes.on_current_delivery(results, reissue)
