"""Enqueue inside the application's own transaction: the message exists if and only if
the transaction commits ("the dual write disappears").

    import asyncpg
    from hopper import enqueue

    async with connection.transaction():
        order_id = await connection.fetchval("INSERT INTO orders ... RETURNING id")
        await enqueue.send(connection, "jobs", f"ship {order_id}")

`send` takes the application's asyncpg connection, inside a transaction, on the
database hopper serves (hopper's schema, `hopper` unless the server was started with
`--database-schema`). It applies SQS's rules exactly as SendMessage does (the same core
and wire code: size limits, delay, attribute validation, FIFO deduplication, the depth
ceiling) and returns SendMessage's answer (MessageId and the MD5s of what was stored).
Refusals are `hopper.wire.errors.SqsError`, named as SendMessage would answer
(`QueueDoesNotExist`, `InvalidParameterValue`, ...). Waiting long polls are woken when
the transaction commits: the wake-up is a `pg_notify` inside it, which PostgreSQL
delivers at commit and drops on rollback.

Applications in other languages (or with psycopg) call the SQL function
`<schema>.send_message(queue_name, message_body, delay_seconds, account_id)` in their
transaction: migration 0080 says what it checks, and hopper/enqueue/rules.py where its
rules come from (this same code: the core, the wire's texts, the store's statement).
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote, urlsplit

import asyncpg

from hopper.core.errors import QueueError
from hopper.core.model import QueueKey
from hopper.core.service import QueueService
from hopper.store.postgres import PostgresQueueStore
from hopper.store.postgres.listener import CHANNEL, payload
from hopper.store.postgres.schema import checked_schema, queries
from hopper.wire.actions.messages import message_draft, sent
from hopper.wire.context import RequestContext
from hopper.wire.errors import SqsError, from_core

DEFAULT_ACCOUNT = "000000000000"
# Notifications carry the sender's instance; a server ignores only its own.
_INSTANCE = "enqueue"
_SQL = queries()


class NotInTransaction(RuntimeError):
    """`send` was called on a connection outside a transaction."""


async def send(
    connection: asyncpg.Connection,
    queue: str,
    body: str,
    *,
    attributes: Mapping[str, Mapping[str, Any]] | None = None,
    delay_seconds: int | None = None,
    group_id: str | None = None,
    deduplication_id: str | None = None,
    account_id: str = DEFAULT_ACCOUNT,
    schema: str = "hopper",
) -> dict[str, Any]:
    """Send one message to `queue` (a name, or a queue URL) within the connection's
    current transaction. `attributes` are SendMessage's MessageAttributes, in boto3's
    shape (`{"n": {"DataType": "String", "StringValue": "v"}}`). Returns SendMessage's
    answer. Raises NotInTransaction, SqsError."""
    if not connection.is_in_transaction():
        raise NotInTransaction("hopper.enqueue.send needs a transaction: the message "
                               "must commit or roll back with the application's rows")
    key = _queue_key(queue, account_id)
    params: dict[str, Any] = {"MessageBody": body}
    for name, value in (
        ("MessageAttributes", attributes), ("DelaySeconds", delay_seconds),
        ("MessageGroupId", group_id), ("MessageDeduplicationId", deduplication_id),
    ):
        if value is not None:
            params[name] = value
    ctx = RequestContext(
        protocol="json", account=key.account, region="", base_url="", path_queue=None,
        trace_header=None, request_id=str(uuid.uuid4()),
    )
    draft = message_draft(ctx, params)
    service = QueueService(PostgresQueueStore.on_connection(connection, schema=schema))
    saved = await connection.fetchval(_SQL["search_path"])
    # hopper's statements name no schema: point them at hopper's for this transaction.
    await connection.execute(_SQL["set_search_path"], checked_schema(schema))
    try:
        result = await service.send(key, draft)
        if not result.duplicate:
            await connection.execute(_SQL["notify"], CHANNEL, [payload(_INSTANCE, key)])
    except QueueError as error:
        raise from_core(error) from None
    finally:
        if not connection.is_closed():
            await _restore(connection, saved)
    return sent(params, draft, result)


async def _restore(connection: asyncpg.Connection, search_path: str) -> None:
    # A failed transaction can only roll back now, and rolling back restores it.
    with contextlib.suppress(asyncpg.InFailedSQLTransactionError):
        await connection.execute(_SQL["set_search_path"], search_path)


def _queue_key(queue: str, account_id: str) -> QueueKey:
    if "/" not in queue:
        return QueueKey(account_id, queue)
    parts = [unquote(part) for part in urlsplit(queue).path.strip("/").split("/")]
    if len(parts) != 2 or not all(parts):
        raise SqsError("QueueDoesNotExist", "The specified queue does not exist.")
    return QueueKey(parts[0], parts[1])
