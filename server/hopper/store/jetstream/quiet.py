"""Empty queues answered without reading them: the console samples every queue's
stats every ten seconds, and on 10,000 idle queues each sample read a record, a ledger
and a backlog per queue (issue 26: stats cheap enough that many queues cost an idle
server little).

A queue is known empty while its ledger held no message at the revision a stats call
read, no write to it came since (this process's own, or another's through the ledger
watch), and its backlog subject holds nothing by JetStream's own per-subject counts:
one stream-info request for every queue, made at most once per COUNTS_SECONDS.
Stats are approximate (SQS's are too): a send another process made within that second,
or a ledger write whose watch event has not arrived, shows at the next look.
"""

from __future__ import annotations

import time

import orjson

from hopper.core.clock import Clock
from hopper.core.errors import StoreUnavailable
from hopper.core.model import QueueKey, QueueStats
from hopper.store.jetstream import edge
from hopper.store.jetstream.records import Records
from hopper.store.jetstream.steps import Loaded
from hopper.store.ledger import Queue
from hopper.store.ledger.rules import LedgerStore

# How long JetStream's per-subject counts of the backlogs are trusted.
COUNTS_SECONDS = 1.0


class Quiet:
    def __init__(self, res: edge.Resources) -> None:
        self._res = res
        # queue -> its incarnation, known to hold an empty ledger (until it is written)
        self._empty: dict[QueueKey, str] = {}
        # (monotonic time read, backlog subjects holding entries), or None
        self._counts: tuple[float, set[str]] | None = None

    async def stats(
        self, records: Records, key: QueueKey, now: float, clock: Clock
    ) -> QueueStats | None:
        """The stats of an empty queue (the ledger's rules on an empty ledger), or None
        when the queue is not known to be empty."""
        listed = await records.listed(key)
        if listed is None or not await self.empty(key, listed[1]):
            return None
        model = LedgerStore(clock)
        model.hold(key, Queue(listed[0]))
        return await model.stats(key, now=now)

    def saw(self, one: Loaded, waiting: int) -> None:
        """A stats call read the queue: its ledger, and how many entries wait beyond."""
        if not one.ledger.queue.messages and waiting == 0:
            self._empty[one.record.key] = one.incarnation
        else:
            self._empty.pop(one.record.key, None)

    def changed(self, key: QueueKey) -> None:
        """The queue's ledger was written."""
        self._empty.pop(key, None)

    async def empty(self, key: QueueKey, incarnation: str) -> bool:
        """Whether the queue (of this incarnation) is known to hold nothing."""
        if self._empty.get(key) != incarnation:
            return False
        return self._res.backlog_subject(incarnation) not in await self._backlogs()

    async def _backlogs(self) -> set[str]:
        """The backlog subjects that hold entries (JetStream's counts, one request)."""
        counts = self._counts
        if counts is not None and time.monotonic() - counts[0] < COUNTS_SECONDS:
            return counts[1]
        res = self._res
        request = orjson.dumps({"subjects_filter": res.backlog_subject("*")})
        with edge.translated():
            answer = await res.nc.request(
                f"$JS.API.STREAM.INFO.{res.body_stream}",
                request,
                timeout=edge.REQUEST_TIMEOUT_SECONDS,
            )
        info = orjson.loads(answer.data)
        if "error" in info:
            raise StoreUnavailable(f"JetStream: {info['error'].get('description', info['error'])}")
        subjects = set((info.get("state", {}).get("subjects") or {}).keys())
        if info.get("total", len(subjects)) > len(subjects):
            # More subjects than one answer lists: none is known empty for now.
            subjects = {res.backlog_subject(i) for i in self._empty.values()}
        self._counts = (time.monotonic(), subjects)
        return subjects
