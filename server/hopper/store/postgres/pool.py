"""The Postgres store's edge: how its connections are opened and set up, how statements
that need it are planned or retried, and what asyncpg's exceptions become.

No asyncpg exception escapes the store: `translated` (failures.py) turns each into the
core's `QueueNotFound` or `StoreUnavailable`, and `open_pool` a failed connection into
`DatabaseUnreachable`.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import TypeVar

import asyncpg

from hopper import jsoncodec
from hopper.core.model import QueueKey
from hopper.store.postgres.coalesce import Run
from hopper.store.postgres.failures import DATABASE_ERRORS
from hopper.store.postgres.schema import Connectable, DatabaseUnreachable

K = TypeVar("K")
T = TypeVar("T")
R = TypeVar("R")

# Every statement is prepared once per connection and keyed by its queue: the plan does
# not depend on the parameters' values. Left to choose ("auto"), PostgreSQL kept planning
# the claim afresh on every execution (its generic plan's estimate looked dearer): 0.9 ms
# of planning for 0.25 ms of execution, a claim of 10 taking 1.5 ms instead of 0.63.
# And no JIT compilation: PostgreSQL compiles a plan whose estimated cost passes
# jit_above_cost at every execution, and the FIFO claim's generic plan passes it once the
# messages table is large (340,000 messages: a cost of 680,000, and 2 s of compiling for
# a claim of 10 that runs in 0.6 ms). These statements are short; compiling never pays.
PLANNING = {"plan_cache_mode": "force_generic_plan", "jit": "off"}
# asyncpg prepares and caches a statement per connection only when its text is at most
# this long; a longer one is parsed and planned afresh at every execution. Its default,
# 15 KiB, is just above the FIFO claim with its comments (14.8 KB): a few lines more, and
# a claim took 3 ms of the database's CPU instead of 0.6. Every statement of
# queries.sql is held below this (tests/store/test_queries_file.py).
STATEMENT_CACHE_LIMIT = 64 * 1024

async def open_pool(dsn: str, schema: str, *, min_size: int, max_size: int) -> asyncpg.Pool:
    """The store's pool on `schema`. Raises DatabaseUnreachable."""
    try:
        return await asyncpg.create_pool(
            dsn,
            min_size=min_size,
            max_size=max_size,
            server_settings={"search_path": schema, **PLANNING},
            max_cacheable_statement_size=STATEMENT_CACHE_LIMIT,
            init=_init_connection,
            reset=_session_is_clean,
        )
    except DATABASE_ERRORS as error:
        raise DatabaseUnreachable(f"cannot connect to the database: {error}") from error


async def listening_connection(dsn: str, schema: str) -> asyncpg.Connection:
    """A connection of its own for LISTEN (store/postgres/listener.py)."""
    return await asyncpg.connect(dsn, server_settings={"search_path": schema})


async def _init_connection(connection: asyncpg.Connection) -> None:
    # jsonb in and out as Python values (config, tags, attributes).
    await connection.set_type_codec(
        "jsonb", encoder=json.dumps, decoder=jsoncodec.loads, schema="pg_catalog"
    )


async def _session_is_clean(connection: asyncpg.Connection) -> None:
    """The pool's reset hook. asyncpg's default sends RESET ALL, UNLISTEN *, CLOSE ALL
    and pg_advisory_unlock_all() on every release: a round trip per request (a third of
    a SendMessage's). The store's pooled connections hold no session state (no SET, no
    LISTEN, no cursor or session lock outlives a statement; the listener and migrations
    use their own connections), and asyncpg still rolls back an open transaction."""


def held_on(
    pool: Callable[[], asyncpg.Pool],
    run: Callable[[Connectable, K, list[T]], Awaitable[list[R]]],
) -> Callable[[K], AbstractAsyncContextManager[Run[K, T, R]]]:
    """A coalescer's `hold` (coalesce.py): a connection of the pool, held while its
    drain's groups keep coming, and `run` on it. asyncpg's acquire and release of a
    pooled connection cost the server more CPU than a statement's round trip
    (SELECT 1: 26-34 us of the client's CPU on a connection, 61-91 through
    Pool.fetch)."""

    @contextlib.asynccontextmanager
    async def hold(key: K) -> AsyncIterator[Run[K, T, R]]:
        async with pool().acquire() as connection:
            yield functools.partial(run, connection)

    return hold


async def fetchrow_planned_for_values(
    db: Connectable | asyncpg.Pool, sql: str, *args: object
) -> asyncpg.Record | None:
    """One row of a statement that reads through a queue's rows (a count, a minimum,
    a purge, the retention sweep), planned for these values. The pool's generic plans
    (PLANNING) suit the statements keyed by position in a queue; these are not: a
    generic plan counted a small queue beside a queue of 1,000,000 messages by reading
    the whole table (a scrape of 22 queues: 3,960 ms against 470 planned for values).
    Two more round trips, on paths that are not per message (a long poll's deadline
    look-up is shared for 250 ms: core/deadlines.py)."""
    if isinstance(db, asyncpg.Pool):
        async with db.acquire() as connection:
            return await fetchrow_planned_for_values(connection, sql, *args)
    async with db.transaction():
        await db.execute("SET LOCAL plan_cache_mode = force_custom_plan")
        return await db.fetchrow(sql, *args)


async def deadlock_retried(
    db: Connectable | asyncpg.Pool, sql: str, *args: object, attempts: int = 3
) -> list[asyncpg.Record]:
    """Run a claim, a delete or a keyed send, again if PostgreSQL broke a deadlock by
    aborting it.

    A claim and a delete can each wait for the other: under READ COMMITTED a claim that
    finds a row changed since its snapshot locks the newest version before re-checking
    it, and keeps that lock even when it then skips the row, while a delete may wait for
    that row holding rows the claim needs. Two keyed sends, each carrying several
    callers' messages (store/postgres/coalesce.py), can take the same deduplication ids in
    opposite orders. The aborted statement changed nothing, so it runs again. Inside a
    transaction (a FIFO receive, a send on the caller's connection) the abort is the
    caller's."""
    for attempt in range(1, attempts + 1):
        try:
            return await db.fetch(sql, *args)
        except asyncpg.DeadlockDetectedError:
            in_transaction = not isinstance(db, asyncpg.Pool) and db.is_in_transaction()
            if attempt == attempts or in_transaction:
                raise
    raise AssertionError("unreachable")


async def fetched_together(
    connection: Connectable, sql: str, arguments: list[tuple[object, ...]], *, attempts: int = 3
) -> list[asyncpg.Record]:
    """The rows of `sql` run once for each of `arguments`, in one round trip: asyncpg's
    fetchmany sends a Bind and an Execute each and one Sync, so PostgreSQL runs them one
    after another in one transaction (each statement reading afresh, the earlier ones'
    changes included) and commits at the end, or changes nothing when one fails. Their
    rows come back as one list. Run again when PostgreSQL broke a deadlock by aborting
    it (see deadlock_retried), unless inside the caller's transaction."""
    for attempt in range(1, attempts + 1):
        try:
            return await connection.fetchmany(sql, arguments)
        except asyncpg.DeadlockDetectedError:
            if attempt == attempts or connection.is_in_transaction():
                raise
    raise AssertionError("unreachable")


def receive_lock(key: QueueKey) -> int:
    """The key of `key`'s receive lock (an advisory lock; lock_queue_for_receive): a
    signed 64-bit number of the queue's account and name, made here so that it can be
    written into a statement (see receive_turn)."""
    digest = hashlib.blake2b(f"{key.account}/{key.name}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


@contextlib.asynccontextmanager
async def receive_turn(connection: Connectable, key: QueueKey) -> AsyncIterator[None]:
    """A transaction holding `key`'s receive lock: FIFO receives of a queue (and moves
    out of it) take turns. BEGIN and the lock go in one round trip -- the simple query
    protocol takes several statements, but no parameters, hence the lock's key is a
    number made here -- where asyncpg's transaction() and a prepared lock statement
    took two. Committed at the end; rolled back when the body fails."""
    await connection.execute(f"BEGIN; SELECT pg_advisory_xact_lock({receive_lock(key)})")
    try:
        yield
    except BaseException:
        # Best effort: a broken connection has no transaction left, and the pool rolls
        # back one left open on release anyway. The body's own error is what counts.
        with contextlib.suppress(*DATABASE_ERRORS):
            await connection.execute("ROLLBACK")
        raise
    await connection.execute("COMMIT")
