"""Every queue with its counts and dead-letter relations, as the metrics and the
dashboard show them: `QueueStore.stats` per queue (the counts GetQueueAttributes
reports, nothing counted twice), re-measured as often as its cost allows (Counts)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from hopper.core.errors import QueueNotFound
from hopper.core.model import Delivery, QueueKey, QueueRecord, QueueStats
from hopper.core.service import QueueService


@dataclass(frozen=True)
class QueueView:
    """One queue as an operator sees it. Ages are in seconds (None: no such message);
    `dead_letter_depth` is None when the queue has no dead-letter rule or its target
    is gone, otherwise every message the target holds (visible, in flight, delayed),
    as the Hopper.DeadLetterQueueDepth attribute counts it."""

    record: QueueRecord
    stats: QueueStats
    oldest_age: float | None
    oldest_visible_age: float | None
    dead_letter_depth: int | None = None
    # Queues whose dead-letter rule names this one, by name.
    sources: list[QueueKey] = field(default_factory=list)

    @property
    def key(self) -> QueueKey:
        return self.record.key

    @property
    def depth(self) -> int:
        return _depth(self.stats)


@dataclass(frozen=True)
class _Measured:
    stats: QueueStats
    at: float  # monotonic seconds, when the measurement began
    took: float  # seconds


class Counts:
    """Queue stats for operators, re-measured only when their cost allows.

    Counting a queue reads all its messages (QueueStore.stats: 0.5 s for a queue of a
    million on Postgres), and dashboards and scrapers ask often. A queue is counted
    again once `1 / share` times its last count's duration has passed since that
    count began, so counting a queue takes at most `share` of the time (1%: one counted
    in 1 ms is fresh for 0.1 s, so small queues are exact at every scrape; one
    counted in 0.5 s is at most 50 s old). GetQueueAttributes is not affected: it
    always counts.

    With many queues the share holds for all of them together: a quiet queue (nothing
    sent, received or deleted through this process since its count, nothing in flight
    or delayed, so nothing changes its counts but another process) is counted again
    only once `1 / share` times what counting every queue took has passed. 10,000 idle
    queues counted every 10 s by the console's sampler cost 17 % of a core in the
    server alone (1.7 ms a queue); now a pass over them comes every half hour, while a
    queue in use stays as fresh as before. It hears of use as an `Events` observer."""

    def __init__(
        self, service: QueueService, *, share: float = 0.01,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._service = service
        self._share = share
        self._monotonic = monotonic
        self._measured: dict[QueueKey, _Measured] = {}
        # What the last count of every queue took, together.
        self._took_all = 0.0
        # Queues used through this process since their last count.
        self._used: set[QueueKey] = set()

    async def stats(self, key: QueueKey) -> QueueStats:
        """The queue's stats, measured now or recently enough. Raises QueueNotFound."""
        measured = self._measured.get(key)
        began = self._monotonic()
        if measured is not None and began - measured.at < self._fresh_for(key, measured):
            return measured.stats
        self._used.discard(key)
        stats = await self._service.queue_stats(key)
        took = self._monotonic() - began
        self._took_all += took - (measured.took if measured is not None else 0.0)
        self._measured[key] = _Measured(stats, began, took)
        return stats

    def _fresh_for(self, key: QueueKey, measured: _Measured) -> float:
        own = measured.took / self._share
        quiet = key not in self._used and not _changes_by_time(measured.stats)
        return max(own, self._took_all / self._share) if quiet else own

    def keep_only(self, keys: set[QueueKey]) -> None:
        """Forget the queues not in `keys` (deleted ones)."""
        for key in self._measured.keys() - keys:
            self._took_all -= self._measured.pop(key).took
        self._used &= keys

    # --- Events: use of a queue through this process makes its count due by its own
    # cost alone again.

    def sent(self, key: QueueKey, count: int) -> None:
        if count:
            self._used.add(key)

    def received(self, key: QueueKey, deliveries: Sequence[Delivery]) -> None:
        if deliveries:
            self._used.add(key)

    def deleted(self, key: QueueKey, count: int) -> None:
        if count:
            self._used.add(key)

    def queue_deleted(self, key: QueueKey) -> None:
        measured = self._measured.pop(key, None)
        if measured is not None:
            self._took_all -= measured.took
        self._used.discard(key)


def _changes_by_time(stats: QueueStats) -> bool:
    """Whether the counts move with no one acting: leases and delays run out."""
    return stats.in_flight > 0 or stats.delayed > 0


async def overview(
    service: QueueService, counts: Counts, *, keep: Callable[[str], bool] | None = None
) -> list[QueueView]:
    """Every queue of every account, by account then name; with `keep`, of the store
    accounts it keeps only (a tenant's own: nothing of the others is read)."""
    stats: dict[QueueKey, tuple[QueueRecord, QueueStats]] = {}
    async for record in service.all_queues(keep=keep):
        try:
            stats[record.key] = (record, await counts.stats(record.key))
        except QueueNotFound:
            continue  # deleted while we looked
    if keep is None:
        counts.keep_only(set(stats))
    now = service.clock.time()
    sources: dict[QueueKey, list[QueueKey]] = {}
    for record, _ in stats.values():
        rule = record.config.dead_letter
        if rule is not None:
            sources.setdefault(rule.target, []).append(record.key)
    views = []
    for record, measured in stats.values():
        rule = record.config.dead_letter
        target = None if rule is None else stats.get(rule.target)
        views.append(
            QueueView(
                record=record,
                stats=measured,
                oldest_age=_age(now, measured.oldest_sent_at),
                oldest_visible_age=_age(now, measured.oldest_visible_sent_at),
                dead_letter_depth=None if target is None else _depth(target[1]),
                sources=sorted(sources.get(record.key, [])),
            )
        )
    return views


async def queue_view(service: QueueService, counts: Counts, key: QueueKey) -> QueueView:
    """One queue as `overview` shows it. Raises QueueNotFound."""
    record = await service.get_queue(key)
    measured = await counts.stats(key)
    rule = record.config.dead_letter
    dead_letter_depth = None
    if rule is not None:
        with contextlib.suppress(QueueNotFound):  # its target is gone
            dead_letter_depth = _depth(await counts.stats(rule.target))
    sources = await service.list_dead_letter_sources(key, max_results=None, next_token=None)
    now = service.clock.time()
    return QueueView(
        record=record,
        stats=measured,
        oldest_age=_age(now, measured.oldest_sent_at),
        oldest_visible_age=_age(now, measured.oldest_visible_sent_at),
        dead_letter_depth=dead_letter_depth,
        sources=sorted(sources.keys),
    )


def _depth(stats: QueueStats) -> int:
    return stats.visible + stats.in_flight + stats.delayed


def _age(now: float, sent_at: float | None) -> float | None:
    # The database clock may run a little ahead of ours: an age is never negative.
    return None if sent_at is None else max(0.0, now - sent_at)
