"""What the Postgres store keeps of its claims for the deletes that follow them.

Addresses: where the claims here left each delivery's row (its ctid, by token: one
store-wide sequence), so that its delete finds the row by address instead of by a
primary-key probe (queries.sql, delete_messages). A hint only: the delete checks the
message and token there, and looks by key where the row moved or no hint is kept
(another process's receipts, a restart). Hints of deliveries never deleted here
(leases that ran out) are dropped all at once past ADDRESSES_KEPT.

Awaited deletes (standard queues): the receives the last shared claim of a queue
answered with messages whose deletes have not come yet, and when that claim ended.
The delete coalescer waits for them before a statement (coalesce.py, `expect`):
without the wait, a round's first delete went alone and the others in a second
statement (a commit and a round trip more). A receive that never deletes here is
forgotten at the next claim, and none is awaited past DELETES_AWAITED_SECONDS; a wait
is at most the bound of coalesce.py.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence

import asyncpg

from hopper.core.model import QueueKey, Receipt

# At most this many addresses of deliveries kept for their deletes.
ADDRESSES_KEPT = 50_000
# The deletes of a shared claim's receives are awaited only this long after the claim:
# a worker still busy with its messages then is not on its way, and the others'
# deletes would wait for it.
DELETES_AWAITED_SECONDS = 0.01


class DeleteHints:
    def __init__(self) -> None:
        # a delivery's token -> the address of its row, as the claim wrote it: the text
        # of its ctid, "(block,offset)", which the delete reads back (delete_messages)
        self.addresses: dict[int, str] = {}
        self._deleting: Counter[QueueKey] = Counter()
        self._claimed_at: dict[QueueKey, float] = {}

    def claimed(self, rows: Sequence[asyncpg.Record]) -> None:
        """Keep where a claim's rows are (its `address` column), for their deletes."""
        if len(self.addresses) + len(rows) > ADDRESSES_KEPT:
            self.addresses.clear()
        for row in rows:
            if row["id"] is not None:
                self.addresses[row["token"]] = row["address"]

    def take(self, receipts: Sequence[Receipt]) -> str:
        """The addresses kept for the receipts' deliveries, no longer kept, as the delete
        takes them: joined by ';', empty where none is kept."""
        pop = self.addresses.pop
        return ";".join([pop(r.token, "") for r in receipts])

    def round_begins(self, key: QueueKey) -> None:
        """A shared claim of `key` begins: its receives are counted afresh."""
        self._deleting.pop(key, None)

    def round_claimed(self, key: QueueKey) -> None:
        """The shared claim of `key` has its rows."""
        self._claimed_at[key] = time.monotonic()

    def received(self, key: QueueKey) -> None:
        """A receive of the shared claim took messages: its delete is on its way."""
        self._deleting[key] += 1

    def deleting(self, key: QueueKey) -> None:
        """A delete of `key` came."""
        if self._deleting[key]:
            self._deleting[key] -= 1

    def awaited(self, key: QueueKey) -> int:
        """The deletes a delete statement of `key` waits for."""
        if time.monotonic() - self._claimed_at.get(key, 0.0) > DELETES_AWAITED_SECONDS:
            return 0
        return self._deleting[key]
