"""The PostgreSQL store's counting and operator statements: purge, stats, in-flight
counts and the next deadline, peeks and discards for the console, the accounts, and the
retention sweep (a mixin of PostgresQueueStore, which owns the pool and the vacuum)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import asyncpg

from hopper.core.errors import QueueNotFound
from hopper.core.model import PeekedMessage, QueueKey, QueueStats
from hopper.store.postgres.failures import translated
from hopper.store.postgres.pool import fetchrow_planned_for_values
from hopper.store.postgres.rows import found, found_id, peeked
from hopper.store.postgres.vacuum import Vacuum


class CountStatements:
    _sql: Mapping[str, str]
    _dead_lettered: Counter[QueueKey]
    vacuum: Vacuum

    @property
    def _db(self) -> asyncpg.Pool:
        raise NotImplementedError  # PostgresQueueStore's pool

    async def purge(self, key: QueueKey, *, now: float | None) -> int:
        with translated(key):
            row = await self._planned_for_values("purge", key.account, key.name, now)
        purged = int(found_id(row, key)["purged"])
        self.vacuum.deleted(purged)
        return purged

    async def last_purged_at(self, key: QueueKey) -> float | None:
        with translated(key):
            row = await self._db.fetchrow(self._sql["last_purged_at"], key.account, key.name)
        purged_at: float | None = found(row, key)["last_purged_at"]
        return purged_at

    async def stats(self, key: QueueKey, *, now: float | None) -> QueueStats:
        with translated(key):
            row = found_id(
                await self._planned_for_values("stats", key.account, key.name, now), key
            )
        return QueueStats(
            visible=row["visible"],
            in_flight=row["in_flight"],
            delayed=row["delayed"],
            oldest_sent_at=row["oldest_sent_at"],
            oldest_visible_sent_at=row["oldest_visible_sent_at"],
            redelivered=row["redelivered"],
            redeliveries=int(row["redeliveries"]),
        )

    async def count_in_flight(self, key: QueueKey, *, now: float | None) -> int:
        # One statement on its generic plan (the queue's rows through its index), where
        # `stats` needs a plan for its values and so a transaction around it: four round
        # trips become one on the receive path.
        with translated(key):
            row = found_id(
                await self._db.fetchrow(
                    self._sql["count_in_flight"], key.account, key.name, now
                ),
                key,
            )
        counted: int = row["in_flight"]
        return counted

    async def next_visible_at(self, key: QueueKey, *, now: float | None) -> float | None:
        with translated(key):
            row = found_id(
                await self._planned_for_values("next_visible_at", key.account, key.name, now),
                key,
            )
        at: float | None = row["next_visible_at"]
        return at

    async def _planned_for_values(self, name: str, *args: object) -> asyncpg.Record | None:
        """One row of statement `name`, planned for these values (see pool.py)."""
        return await fetchrow_planned_for_values(self._db, self._sql[name], *args)

    # --- operators (metrics and the dashboard) ------------------------------------------

    async def peek(self, key: QueueKey, *, limit: int, now: float | None) -> list[PeekedMessage]:
        with translated(key):
            rows = await self._db.fetch(
                self._sql["peek_messages"], key.account, key.name, now, limit
            )
        if rows[0]["found_queue_id"] is None:
            raise QueueNotFound(key)
        return [peeked(row) for row in rows if row["id"] is not None]

    async def discard(self, key: QueueKey, message_id: str, *, now: float | None) -> bool:
        with translated(key):
            row = await self._db.fetchrow(
                self._sql["discard_message"], key.account, key.name, now, message_id
            )
        discarded = bool(found_id(row, key)["discarded"])
        self.vacuum.deleted(int(discarded))
        return discarded

    async def accounts(self) -> list[str]:
        with translated():
            rows = await self._db.fetch(self._sql["accounts"])
        return [row["account"] for row in rows]

    def dead_lettered(self) -> Mapping[QueueKey, int]:
        return {key: moved for key, moved in self._dead_lettered.items() if moved}

    # --- retention ------------------------------------------------------------------

    async def sweep_expired(self, *, limit: int, now: float | None) -> int:
        with translated():
            # Rows of deleted queues are no expired messages, only garbage: not counted.
            await self._db.fetchval(self._sql["sweep_orphans"], limit)
            row = await self._planned_for_values("sweep_expired", now, limit)
        return 0 if row is None else int(row[0])
