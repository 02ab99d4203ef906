"""Which queues the retention sweep visits, so that idle queues cost an idle server
nothing per round (issue 26: 10,000 idle queues took half a core, a ledger read and a
backlog read per queue every housekeeping round, and a scan of every record).

Retention is applied lazily by every step (`store/ledger/rules.py`); the sweep only
frees the space of messages nobody looks at. A queue the sweep found with nothing
waiting in its backlog needs no visit before its oldest message can expire (an empty
one: before a message sent now could), nor later than IDLE_SECONDS (its retention
period may have been shortened since; AWS too takes up to 15 minutes to apply one).
Any write to its ledger (a dead letter or a move brings old messages) makes it due
again: this process's own writes at once, another's through the ledger watch.

A visit reads the backlog (up to the sweep's limit of its oldest messages, into the
ledger) only when something there may have expired. The backlog's entries wait in the
order they were published, after every message the ledger took from it: while one of
those is unexpired, so is everything still waiting. A busy deep queue's ledger is
written all the time, and each round took 500 fresh messages into it, to expire none.
"""

from __future__ import annotations

import math

from hopper.core.errors import QueueNotFound
from hopper.core.model import QueueKey, QueueRecord
from hopper.store.jetstream.records import Records
from hopper.store.jetstream.steps import Loaded, Steps
from hopper.store.ledger.rules import LedgerStore

# The longest a swept queue waits for its next visit.
IDLE_SECONDS = 300.0
# How often the list of every queue is read again (queues this process has read join it
# at once).
SCAN_SECONDS = 60.0


class Sweeps:
    def __init__(self) -> None:
        # queue -> hopper's time at which it next needs a visit
        self._due: dict[QueueKey, float] = {}
        self._scanned: list[QueueKey] = []
        self._scanned_at = -math.inf
        # queue -> hopper's time before which nothing waiting in its backlog can have
        # expired (a message the ledger took from it does not expire before then)
        self._fresh_until: dict[QueueKey, float] = {}

    async def sweep(self, steps: Steps, records: Records, limit: int, now: float) -> int:
        """Sweep expired messages of the due queues, `limit` at most; how many."""
        swept = 0
        for key in await self.due(records, now):
            if swept >= limit:
                break
            left = limit - swept
            absorb = 0 if now < self._fresh_until.get(key, -math.inf) else left
            seen: list[Loaded] = []

            async def expire(model: LedgerStore, left: int = left) -> int:
                return await model.sweep_expired(limit=left, now=now)

            try:
                # The backlog's head is its oldest: read as far as this sweep may go.
                done = await steps.run(key, expire, now=now, absorb=absorb, after=seen.append)
            except QueueNotFound:  # deleted since the scan
                self._fresh_until.pop(key, None)
                continue
            swept += done.result
            if seen:
                self._fresh_until[key] = fresh_until(seen[-1], now)
            if done.waiting == 0 and seen:  # (the last round's view, if it was retried)
                messages = seen[-1].ledger.queue.messages.values()
                oldest = min((m.stored.sent_at for m in messages), default=None)
                self.swept(seen[-1].record, now, oldest)
        return swept

    async def due(self, records: Records, now: float) -> list[QueueKey]:
        """The queues to visit now."""
        if not now - SCAN_SECONDS < self._scanned_at <= now:
            self._scanned = [r.key for r in await records.scan()]
            self._scanned_at = now
        known = dict.fromkeys([*self._scanned, *records.incarnations.values()])
        return [key for key in known if self._due.get(key, -math.inf) <= now]

    def swept(self, record: QueueRecord, now: float, oldest: float | None) -> None:
        """The sweep left the queue with nothing waiting in its backlog and its oldest
        message sent at `oldest` (None: no message)."""
        retention = record.config.message_retention_period
        expires = now + retention if oldest is None else oldest + retention
        self._due[record.key] = min(expires, now + IDLE_SECONDS)

    def changed(self, key: QueueKey) -> None:
        """The queue's ledger was written: visit it at the next round."""
        self._due.pop(key, None)


def fresh_until(one: Loaded, now: float) -> float:
    """Until when nothing waiting in the queue's backlog can have expired: the newest
    message the ledger took from the backlog was published before everything still
    waiting. Not later than IDLE_SECONDS from now (its retention period may be shortened
    meanwhile, or the queue deleted and made again: retention is applied by every step
    anyway, the sweep only frees space); -inf when the ledger holds none."""
    ledger, absorbed = one.ledger, one.ledger.absorbed
    newest = max(
        (m.stored.sent_at for m in ledger.queue.messages.values() if m.stored.id in absorbed),
        default=None,
    )
    if newest is None:
        return -math.inf
    retention = one.record.config.message_retention_period
    return min(newest + retention, now + IDLE_SECONDS)
