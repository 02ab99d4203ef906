"""The fan-out of one publish (or one PublishBatch) into its subscribed queues, in one
transaction of a few statements whatever the number of queues: the queues' rows
(`get_queues`), the copies for plain standard queues together (`send_plain_across`),
each copy for a FIFO queue or a queue with a depth ceiling through the store's own send
(deduplication windows and ceilings), and the wake-ups (`pg_notify`, delivered at
commit). Each copy is checked against its queue by the queue core's own rule
(`messages.prepare`, SendMessage's), so a copy the queue refuses fails alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from hopper.core import messages, outcomes
from hopper.core.errors import QueueError, QueueNotFound
from hopper.core.ids import new_id
from hopper.core.model import NewMessage, QueueKey, QueueRecord, SendResult
from hopper.sns.store import QueueCopy
from hopper.store.postgres.listener import CHANNEL, payload
from hopper.store.postgres.rows import record
from hopper.store.postgres.schema import Connectable, queries
from hopper.store.postgres.sends import keyed, send_plain_across
from hopper.store.postgres.store import PostgresQueueStore

# Wake-ups name their sender; a server ignores only its own instance's, and the
# fan-out's come from here, so every server (this one too) hears them.
INSTANCE = "sns"
Result = SendResult | QueueError


async def deliver(
    connection: Connectable, schema: str, copies: Sequence[QueueCopy]
) -> list[Result]:
    """Every copy, on `connection` inside the caller's transaction."""
    sql = queries()
    records = await _records(connection, sql["get_queues"], {key for key, _ in copies})
    results: list[Result | None] = [None] * len(copies)
    plain: list[tuple[int, QueueKey, NewMessage]] = []
    store = PostgresQueueStore.on_connection(connection, schema=schema)
    for place, (key, draft) in enumerate(copies):
        found = records.get(key)
        try:
            if found is None:
                raise QueueNotFound(key)
            message = messages.prepare(draft, found.config, new_id())
        except QueueError as error:
            results[place] = error
            continue
        if keyed(key, [message]) or found.config.maximum_depth is not None:
            results[place] = await _send_one(store, found, message)
        else:
            plain.append((place, key, message))
    if plain:
        sent = await send_plain_across(connection, sql, None, [(k, m) for _, k, m in plain])
        for (place, key, _), result in zip(plain, sent, strict=True):
            results[place] = QueueNotFound(key) if result is None else result
    done = [r for r in results if r is not None]
    woken = sorted({key for (key, _), r in zip(copies, done, strict=True)
                    if not isinstance(r, QueueError)})
    if woken:
        await connection.execute(sql["notify"], CHANNEL, [payload(INSTANCE, k) for k in woken])
    return done


async def _records(
    connection: Connectable, statement: str, keys: set[QueueKey]
) -> dict[QueueKey, QueueRecord]:
    ordered = sorted(keys)
    rows = await connection.fetch(statement, [k.account for k in ordered],
                                  [k.name for k in ordered])
    found = [record(row) for row in rows]
    return {r.key: r for r in found}


async def _send_one(store: PostgresQueueStore, found: QueueRecord, message: NewMessage) -> Result:
    [result] = await store.send(found.key, [message], now=None,
                                max_depth=found.config.maximum_depth)
    return outcomes.refused_as(outcomes.queue_full(found.key, found.config), result)
