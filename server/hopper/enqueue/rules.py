"""The rules of the SQL function send_message(), taken from the code that states them.

send_message() (migrations 0050 and 0080) enqueues from SQL inside an application's
transaction, for applications that cannot use hopper.enqueue. It runs in the database,
without hopper, so it cannot call the core; instead it reads SendMessage's rules from
the table `send_rules`, which `install` writes at every migration from their one
definition each:

- the characters SQS refuses: core/characters.py (its expression is a bracket of plain
  characters and ranges, which Python and PostgreSQL read alike);
- the longest delay and the deduplication window: core/limits.py;
- the insert and the depth ceiling: the store's own send statements (queries.sql
  `send_messages`, which counts the ceiling, and the lean `send_plain_messages` for
  queues without one), run by the function with the parameters sends.py would give;
- the error texts: what the core raises for a send breaking each rule, worded by the
  wire's one table (wire/errors.py), its values made format() placeholders;
- the wake-up: the listener's channel and payload (store/postgres/listener.py).

What the function keeps as its own: which of these a plain body to a standard queue can
break, and the comparisons (empty, matches, longer than, outside the range), in the
core's order; tests/postgres/test_enqueue.py holds it to the core's edges and texts.
"""

from __future__ import annotations

from typing import Any

from hopper.core import characters, limits, messages, outcomes
from hopper.core.errors import QueueError, QueueNotFound, UnsupportedOperation
from hopper.core.model import MessageDraft, QueueConfig, QueueKey
from hopper.store.postgres.listener import CHANNEL, payload
from hopper.store.postgres.schema import Connectable, connect, queries
from hopper.store.postgres.schema import migrate as migrate_schema
from hopper.wire.errors import from_core

# Who the wake-ups of send_message() come from (a server ignores only its own).
INSTANCE = "sql"
FIFO_REFUSED = (
    "send_message() sends to standard queues only; use hopper.enqueue for FIFO queues."
)
# Values no rule's text holds otherwise: each becomes the placeholder of a text.
_LIMIT = 7_919
_DELAY = 1_000_003
_NAME = "queue-name-marker"
_ACCOUNT = "account-marker"


async def migrate(dsn: str, schema: str = "hopper") -> list[str]:
    """Migrate `schema` (store/postgres/schema.py's migrate: the names of the migrations applied
    now), then write this code's send rules into it. Raises what that migrate raises."""
    applied = await migrate_schema(dsn, schema)
    connection = await connect(dsn, schema)
    try:
        await install(connection)
    finally:
        await connection.close()
    return applied


async def install(connection: Connectable) -> None:
    """Write the send rules into the schema on the connection's search path."""
    await connection.execute(queries()["set_send_rules"], *rules())


def rules() -> tuple[Any, ...]:
    """The parameters of queries.sql `set_send_rules`, in its order."""
    return (
        characters.FORBIDDEN.pattern,
        float(limits.MAX_DELAY_SECONDS),
        float(limits.DEDUPLICATION_WINDOW_SECONDS),
        queries()["send_messages"],
        queries()["send_plain_messages"],
        CHANNEL,
        _template(payload(INSTANCE, QueueKey(_ACCOUNT, _NAME)), _ACCOUNT, _NAME),
        _text(QueueNotFound(QueueKey(_ACCOUNT, _NAME))),
        _text(UnsupportedOperation(FIFO_REFUSED)),
        _refusal(MessageDraft(body="")),
        _refusal(MessageDraft(body="\x07")),
        _refusal(MessageDraft(body="x" * (_LIMIT + 1)), str(_LIMIT)),
        _refusal(MessageDraft(body="x", delay=_DELAY), str(_DELAY)),
        _template(_text(outcomes.queue_full(
            QueueKey(_ACCOUNT, _NAME), QueueConfig(maximum_depth=_LIMIT)
        )), _NAME, str(_LIMIT)),
    )


def _refusal(draft: MessageDraft, *values: str) -> str:
    """The text of the core's refusal of `draft` on a standard queue whose maximum
    message size is _LIMIT; with `values`, a template of them (the function formats
    only those texts)."""
    try:
        messages.prepare(draft, QueueConfig(maximum_message_size=_LIMIT), "id")
    except QueueError as error:
        return _template(_text(error), *values) if values else _text(error)
    raise ValueError(f"the core accepts {draft!r}: it is no refusal")


def _text(error: QueueError) -> str:
    """An error as send_message() raises it: its SQS name, then its message."""
    refusal = from_core(error)
    return f"{refusal.name}: {refusal.message}"


def _template(text: str, *values: str) -> str:
    """`text` as a format() template: each of `values` (which must occur once) becomes
    the placeholder of format()'s argument in its place (%1$s, %2$s, ...); any other %
    stays itself."""
    template = text.replace("%", "%%")
    for place, value in enumerate(values, start=1):
        if template.count(value) != 1:
            raise ValueError(f"{value!r} does not occur exactly once in {text!r}")
        template = template.replace(value, f"%{place}$s")
    return template
