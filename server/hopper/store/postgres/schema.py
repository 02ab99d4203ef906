"""The Postgres schema: versioned migrations and the named queries.

Migrations are `sql/migrations/NNNN_name.sql`, applied in order, each in its own
transaction, recorded in `schema_migrations`. `migrate` holds a session advisory lock
for the whole run, so two servers starting at once apply each migration exactly once.

Queries live in `sql/queries.sql` as named blocks (`-- name: claim_messages`), loaded
once; SQL is never assembled from strings, except the schema name, which is checked to
be a plain identifier before it is used, and fragments: a block `-- fragment: name` is
no statement but text that statements share, and a statement's line `-- include: name`
stands for it (but for the fragment's documentation, its comment lines up to the first
empty line); a fragment may include those above it. So the claims, which differ only
in how they pick, state the rest once.
"""

from __future__ import annotations

import functools
import re
import zlib
from importlib import resources
from typing import Any, TypeAlias

import asyncpg
import asyncpg.pool

# A plain connection, or one borrowed from a pool.
Connectable: TypeAlias = asyncpg.Connection | asyncpg.pool.PoolConnectionProxy

_IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]{0,62}")
_BLOCK = re.compile(r"^--\s*(name|fragment):\s*(\w+)\s*$", re.MULTILINE)
_INCLUDE = re.compile(r"^--\s*include:\s*(\w+)\s*$", re.MULTILINE)
# A fragment's documentation: its comment lines up to the first empty line.
_DOCUMENTATION = re.compile(r"\A(?:--[^\n]*\n)+\n")
# Any fixed number serves: the lock is also keyed by schema name (see _lock_key).
_LOCK_NAMESPACE = 0x686F70  # "hop"


class SchemaError(Exception):
    """Base of the errors `migrate` raises on purpose."""


class SchemaTooNew(SchemaError):
    """The database has migrations this code does not know: it was migrated by a newer
    hopper. Running would risk writing rows the newer schema does not expect."""

    def __init__(self, unknown: list[str]) -> None:
        super().__init__(
            "the database schema is newer than this hopper (unknown migrations: "
            + ", ".join(unknown)
            + "); upgrade hopper"
        )
        self.unknown = unknown


class DatabaseUnreachable(SchemaError):
    """The database could not be connected to (refused, unknown host, bad credentials)."""


class SchemaNotCurrent(SchemaError):
    """The database lacks migrations this code needs: run `hopper migrate` first."""

    def __init__(self, missing: list[str]) -> None:
        super().__init__(
            "the database schema is not migrated (missing: "
            + ", ".join(missing)
            + "); run `hopper migrate`"
        )
        self.missing = missing


class InvalidSchemaName(SchemaError, ValueError):
    pass


def checked_schema(schema: str) -> str:
    """`schema` if it is a plain lower-case identifier; raises InvalidSchemaName."""
    if not _IDENTIFIER.fullmatch(schema):
        raise InvalidSchemaName(f"schema name {schema!r} is not a plain identifier")
    return schema


def migrations() -> list[tuple[str, str]]:
    """(name, sql) of every migration shipped with this code, in order."""
    folder = resources.files("hopper.store.postgres") / "sql" / "migrations"
    files = sorted((f for f in folder.iterdir() if f.name.endswith(".sql")), key=lambda f: f.name)
    return [(f.name.removesuffix(".sql"), f.read_text()) for f in files]


@functools.cache
def queries() -> dict[str, str]:
    """The named blocks of `sql/queries.sql`: name -> SQL text."""
    text = (resources.files("hopper.store.postgres") / "sql" / "queries.sql").read_text()
    return named_blocks(text)


def named_blocks(text: str) -> dict[str, str]:
    """The statements of a queries file, their `-- include:` lines replaced by the
    fragments they name. Raises KeyError naming an include without its fragment."""
    parts = _BLOCK.split(text)
    # parts = [preamble, kind1, name1, body1, kind2, name2, body2, ...]
    blocks = list(zip(parts[1::3], parts[2::3], parts[3::3], strict=True))
    fragments: dict[str, str] = {}

    def included(match: re.Match[str]) -> str:
        if match.group(1) not in fragments:
            raise KeyError(f"-- include: {match.group(1)} names no fragment")
        return fragments[match.group(1)]

    for kind, name, body in blocks:
        if kind == "fragment":  # (its includes: fragments above it)
            text = _DOCUMENTATION.sub("", body.strip() + "\n").strip()
            fragments[name] = _INCLUDE.sub(included, text)
    return {
        name: _INCLUDE.sub(included, body.strip()) for kind, name, body in blocks
        if kind == "name"
    }


async def connect(dsn: str, schema: str, **kwargs: Any) -> asyncpg.Connection:
    """One connection with `schema` on its search path; raises DatabaseUnreachable."""
    try:
        return await asyncpg.connect(
            dsn, server_settings={"search_path": checked_schema(schema)}, **kwargs
        )
    except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as error:
        raise DatabaseUnreachable(f"cannot connect to the database: {error}") from error


async def migrate(dsn: str, schema: str = "hopper") -> list[str]:
    """Bring `schema` up to date (creating it if needed); returns the names of the
    migrations applied now, in order (empty when already current). Safe to run from
    several processes at once. Raises SchemaTooNew, DatabaseUnreachable."""
    connection = await connect(dsn, schema)
    try:
        await connection.execute(
            "SELECT pg_advisory_lock($1, $2)", _LOCK_NAMESPACE, _lock_key(schema)
        )
        try:
            return await _apply_pending(connection, schema)
        finally:
            await connection.execute(
                "SELECT pg_advisory_unlock($1, $2)", _LOCK_NAMESPACE, _lock_key(schema)
            )
    finally:
        await connection.close()


async def applied(connection: Connectable) -> list[str]:
    """Names of the migrations recorded in the connection's schema, in order."""
    exists = await connection.fetchval("SELECT to_regclass('schema_migrations') IS NOT NULL")
    if not exists:
        return []
    rows = await connection.fetch("SELECT name FROM schema_migrations ORDER BY name")
    return [row["name"] for row in rows]


async def require_current(
    connection: Connectable,
) -> None:
    """Raise SchemaTooNew or SchemaNotCurrent unless the connection's schema has exactly
    the migrations of this code."""
    done = await applied(connection)
    known = [name for name, _ in migrations()]
    unknown = sorted(set(done) - set(known))
    if unknown:
        raise SchemaTooNew(unknown)
    missing = [name for name in known if name not in done]
    if missing:
        raise SchemaNotCurrent(missing)


async def _apply_pending(connection: asyncpg.Connection, schema: str) -> list[str]:
    # The schema name is a checked identifier: the one string ever put into SQL.
    await connection.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
    await connection.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " name text PRIMARY KEY,"
        " applied_at timestamptz NOT NULL DEFAULT clock_timestamp())"
    )
    done = await applied(connection)
    known = migrations()
    unknown = sorted(set(done) - {name for name, _ in known})
    if unknown:
        raise SchemaTooNew(unknown)
    names = []
    for name, sql in known:
        if name in done:
            continue
        async with connection.transaction():
            await connection.execute(sql)
            await connection.execute("INSERT INTO schema_migrations (name) VALUES ($1)", name)
        names.append(name)
    return names


def _lock_key(schema: str) -> int:
    """A stable signed 32-bit key per schema (hash() is salted per process, so not that)."""
    return zlib.crc32(schema.encode()) - 2**31
