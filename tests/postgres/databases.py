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
    source = await template()
    name = f"hopper_test_{uuid.uuid4().hex[:12]}"
    admin = await _admin()
    try:
        await admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{source}"')
    finally:
        await admin.close()
    try:
        yield dsn_for(name)
    finally:
        await drop(name)


async def drop_template() -> None:
    global _template
    if _template is not None:
        name, _template = _template, None
        await drop(name)


# Each test has its own event loop, so the template outlives them all: drop it at exit.
atexit.register(lambda: asyncio.run(drop_template()))
