"""Fresh Postgres databases for tests: a template migrated once per session, then
`CREATE DATABASE ... TEMPLATE` per test (a file copy: milliseconds, no migrations).

Shared by tests/postgres and the contract suite's Postgres factory. Names are unique
per process, so several test runs can share one server. When Postgres cannot be
reached the tests fail: they are never skipped.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg
import pytest

from hopper.enqueue.rules import migrate

ADMIN_DSN = os.environ.get("HOPPER_TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")
SCHEMA = "hopper"

_template: str | None = None


def dsn_for(database: str) -> str:
    """The admin DSN with its database replaced."""
    base, _, _ = ADMIN_DSN.rpartition("/")
    return f"{base}/{database}"


async def _admin() -> asyncpg.Connection:
    try:
        return await asyncpg.connect(ADMIN_DSN)
    except (OSError, asyncpg.PostgresError) as error:
        # Never a skip: these tests are the Postgres store's specification.
        pytest.fail(f"PostgreSQL unreachable at {ADMIN_DSN}: {error}")


async def empty_database() -> str:
    """A new, empty database's name (no schema at all)."""
    name = f"hopper_test_{uuid.uuid4().hex[:12]}"
    admin = await _admin()
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    return name


async def template() -> str:
    """The session's migrated template database (created on first use)."""
    global _template
    if _template is None:
        name = await empty_database()
        await migrate(dsn_for(name), SCHEMA)
        admin = await _admin()
        try:
            # Nobody may connect to a template while it is copied.
            await admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
        finally:
            await admin.close()
        _template = name
    return _template


async def drop(name: str) -> None:
    admin = await _admin()
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


@asynccontextmanager
async def fresh_database() -> AsyncIterator[str]:
    """A DSN of a new database with hopper's schema applied, dropped afterwards."""
    name = f"hopper_test_{uuid.uuid4().hex[:12]}"
    await _clone(name)
    try:
        yield dsn_for(name)
    finally:
        await drop(name)


# The contract suite's databases that earlier tests of this process gave back, to be
# emptied and used again (see reused_database).
_spares: list[str] = []

# Empties a database cloned from the template back to what the clone held: the rows of
# every table but the migrations' own records (schema_migrations, send_rules) deleted,
# the tables that refer to others first, and every sequence set back to its start.
# DELETE, not TRUNCATE: on tables of a few rows it costs 3 ms where TRUNCATE's new files
# cost 50. A lock left behind by a broken test fails the emptying instead of waiting.
_EMPTY = """
SET lock_timeout = '2s';
DO $$
DECLARE
    emptied record;
BEGIN
    FOR emptied IN
        SELECT format('%I.%I', t.schemaname, t.tablename) AS name
        FROM pg_tables t
        WHERE t.schemaname = current_schema()
          AND t.tablename NOT IN ('schema_migrations', 'send_rules')
        ORDER BY EXISTS (
            SELECT 1 FROM pg_constraint c
            WHERE c.contype = 'f'
              AND c.conrelid = format('%I.%I', t.schemaname, t.tablename)::regclass
        ) DESC
    LOOP
        EXECUTE 'DELETE FROM ' || emptied.name;
    END LOOP;
    PERFORM setval(format('%I.%I', schemaname, sequencename), start_value, false)
    FROM pg_sequences WHERE schemaname = current_schema();
END $$;
"""


async def _emptied(name: str) -> bool:
    """Whether the database could be emptied as a fresh clone is."""
    try:
        connection = await asyncpg.connect(dsn_for(name), server_settings={"search_path": SCHEMA})
    except (OSError, asyncpg.PostgresError):
        return False
    try:
        await connection.execute(_EMPTY)
    except asyncpg.PostgresError:
        return False
    finally:
        await connection.close()
    return True


@asynccontextmanager
async def reused_database() -> AsyncIterator[str]:
    """A DSN of a database with hopper's schema and no rows, as `fresh_database` gives,
    for the contract suite: one an earlier test gave back, emptied, when there is one.
    A clone costs 0.1-0.3 s a test, emptying one a few milliseconds, and the clones
    were most of what `pytest -m "not slow"` waited for. For tests that look at rows
    only: the tests of query plans, sizes and vacuuming (tests/postgres) keep
    fresh_database. A database whose store failed to start or to close is dropped, not
    given back."""
    name = None
    while _spares and name is None:
        spare = _spares.pop()
        if await _emptied(spare):
            name = spare
        else:
            await drop(spare)
    if name is None:
        name = f"hopper_test_{uuid.uuid4().hex[:12]}"
        await _clone(name)
    try:
        yield dsn_for(name)
    except BaseException:
        await drop(name)
        raise
    _spares.append(name)


async def _clone(name: str) -> None:
    source = await template()
    admin = await _admin()
    try:
        await admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{source}"')
    finally:
        await admin.close()


async def drop_template() -> None:
    global _template
    while _spares:
        await drop(_spares.pop())
    if _template is not None:
        name, _template = _template, None
        await drop(name)


# Each test has its own event loop, so the template and the spares outlive them all:
# drop them at exit.
atexit.register(lambda: asyncio.run(drop_template()))
