"""The Postgres store's send routes, behind one object: which statement a send runs
(sends.py) and whether it shares it with concurrent sends (coalesce.py).

- a send with keys to take (FIFO deduplication ids, live keys) or a depth ceiling to
  count shares a statement with the concurrent sends of its queue;
- a send with neither shares one with the concurrent plain sends of every queue;
- a store on the caller's connection (hopper.enqueue) shares nothing: its sends run
  in the caller's transaction, one statement each.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from hopper.core.model import NewMessage, QueueKey, SendResult
from hopper.store.postgres.coalesce import Coalescer
from hopper.store.postgres.sends import (
    Database,
    as_duplicate,
    first_uses,
    found_result,
    keyed,
    send_plain_across,
    send_unique,
)

# What sends may share a statement on: the queue, the clock's reading, the depth ceiling.
SendGroup = tuple[QueueKey, float | None, int | None]
# A message to send and its queue, for the plain sends shared across queues.
PlainSend = tuple[QueueKey, NewMessage]


class Sender:
    def __init__(
        self, on: Callable[[], Database], sql: Mapping[str, str], *, coalesce: bool
    ) -> None:
        """`on()`: where a send runs (the pool, or the caller's connection)."""
        self._on = on
        self._sql = sql
        self._coalesce = coalesce
        self._keyed: Coalescer[SendGroup, NewMessage, SendResult] = Coalescer(
            self._send_group, size=lambda message: len(message.body)
        )
        # Plain sends of every queue share statements, keyed by `now` alone.
        self._plain: Coalescer[float | None, PlainSend, SendResult | None] = Coalescer(
            self._send_plain_group, size=lambda item: len(item[1].body)
        )

    async def send(
        self,
        key: QueueKey,
        messages: Sequence[NewMessage],
        now: float | None,
        max_depth: int | None,
    ) -> list[SendResult]:
        """Enqueue `messages` by the route that fits them. Raises QueueNotFound."""
        if not self._coalesce or not messages:
            return await self._send_group((key, now, max_depth), list(messages))
        if keyed(key, messages) or max_depth is not None:
            # keys to take or a ceiling to count: concurrent sends of the queue share
            # a statement (see coalesce.py)
            return await self._keyed.submit((key, now, max_depth), messages)
        # Nothing to take or count: concurrent sends of any queues share one.
        plain = await self._plain.submit(now, [(key, m) for m in messages])
        return [found_result(result, key) for result in plain]

    async def close(self) -> None:
        """Wait for the statements already started (their callers are owed answers)."""
        await self._keyed.close()
        await self._plain.close()

    async def _send_plain_group(
        self, now: float | None, items: list[PlainSend]
    ) -> list[SendResult | None]:
        return await send_plain_across(self._on(), self._sql, now, items)

    async def _send_group(self, group: SendGroup, messages: list[NewMessage]) -> list[SendResult]:
        """One statement for `messages`, one send's or several sends' that share it."""
        key, now, max_depth = group
        if not keyed(key, messages):
            return await send_unique(self._on(), self._sql, key, messages, now, max_depth)
        # One statement cannot take a key twice: a repeat is a duplicate of its first
        # use, as if sent just after it (FIFO deduplication ids, live keys on a standard
        # queue), in one send's batch as between the sends sharing a statement.
        unique, positions = first_uses(messages)
        results = await send_unique(self._on(), self._sql, key, unique, now, max_depth)
        return [
            as_duplicate(results[index]) if repeat else results[index]
            for index, repeat in positions
        ]
