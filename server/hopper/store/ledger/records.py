"""The memory store's queue records: create, look up, list, update, delete, tags, and the
deletions SQS's re-create window asks about (a mixin of LedgerStore)."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence

from hopper.core import limits
from hopper.core.errors import QueueNotFound
from hopper.core.model import QueueConfig, QueueKey, QueueRecord
from hopper.store.ledger import Queue

# Deleted queues remembered before old deletions are looked for (see _forget_deletions).
MIN_DELETIONS_KEPT = 1024


class QueueRecords:
    _queues: dict[QueueKey, Queue]
    _deleted_at: dict[QueueKey, float]
    _deletions_checked_at: int
    _dead_lettered: Counter[QueueKey]
    _arrived: set[QueueKey]

    def _now(self, now: float | None) -> float:
        raise NotImplementedError

    def _queue(self, key: QueueKey) -> Queue:
        queue = self._queues.get(key)
        if queue is None:
            raise QueueNotFound(key)
        return queue

    async def create_queue(
        self,
        key: QueueKey,
        config: QueueConfig,
        tags: Mapping[str, str],
        *,
        now: float | None,
    ) -> tuple[QueueRecord, bool]:
        existing = self._queues.get(key)
        if existing is not None:
            return existing.record, False
        at = self._now(now)
        record = QueueRecord(key, config, created_at=at, last_modified_at=at, tags=dict(tags))
        self._queues[key] = Queue(record)
        return record, True

    async def get_queue(self, key: QueueKey) -> QueueRecord | None:
        queue = self._queues.get(key)
        return None if queue is None else queue.record

    async def list_queues(
        self, account: str, *, prefix: str = "", after: str | None = None, limit: int = 1000
    ) -> list[QueueRecord]:
        names = sorted(
            key.name
            for key in self._queues
            if key.account == account
            and key.name.startswith(prefix)
            and (after is None or key.name > after)
        )
        return [self._queues[QueueKey(account, name)].record for name in names[:limit]]

    async def update_queue(
        self, key: QueueKey, config: QueueConfig, *, now: float | None
    ) -> QueueRecord:
        queue = self._queue(key)
        queue.record = dataclasses.replace(
            queue.record, config=config, last_modified_at=self._now(now)
        )
        return queue.record

    async def delete_queue(self, key: QueueKey, *, now: float | None) -> float | None:
        if self._queues.pop(key, None) is None:
            return None
        at = self._now(now)
        self._dead_lettered.pop(key, None)
        self._arrived.discard(key)
        self._deleted_at[key] = at
        self._forget_deletions(at)
        return at

    def _forget_deletions(self, now: float) -> None:
        """Forget deletions older than SQS's re-create window, which is all they answer
        for: kept, one per deleted queue, they grew without end under a suite making a
        queue per test. Looked at when their number doubled: constant time a delete."""
        if len(self._deleted_at) < self._deletions_checked_at * 2:
            return
        since = now - limits.QUEUE_RECREATE_SECONDS
        self._deleted_at = {k: at for k, at in self._deleted_at.items() if at >= since}
        self._deletions_checked_at = max(len(self._deleted_at), MIN_DELETIONS_KEPT)

    async def last_deleted_at(self, key: QueueKey) -> float | None:
        return self._deleted_at.get(key)

    async def set_tags(
        self, key: QueueKey, *, add: Mapping[str, str], remove: Sequence[str]
    ) -> QueueRecord:
        queue = self._queue(key)
        tags = {**queue.record.tags, **add}
        for tag_key in remove:
            tags.pop(tag_key, None)
        queue.record = dataclasses.replace(queue.record, tags=tags)
        return queue.record

    async def dead_letter_sources(self, target: QueueKey) -> list[QueueKey]:
        return sorted(
            (
                key
                for key, queue in self._queues.items()
                if queue.record.config.dead_letter is not None
                and queue.record.config.dead_letter.target == target
            ),
            key=lambda key: (key.name, key.account),
        )
