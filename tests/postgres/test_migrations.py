"""Migrations: only Postgres has a schema to keep."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import asyncpg
import pytest

from hopper.store.postgres import PostgresQueueStore
from hopper.store.postgres.schema import (
    DatabaseUnreachable,
    InvalidSchemaName,
    SchemaNotCurrent,
    SchemaTooNew,
    migrate,
    migrations,
)

from .databases import drop, dsn_for, empty_database

ALL = [name for name, _ in migrations()]


@pytest.fixture
async def empty() -> AsyncIterator[str]:
    name = await empty_database()
    yield dsn_for(name)
    await drop(name)


async def test_migrate_applies_every_migration_then_nothing(empty: str) -> None:
    assert await migrate(empty, "hopper") == ALL
    assert await migrate(empty, "hopper") == []


async def test_two_migrations_at_once_apply_each_migration_exactly_once(empty: str) -> None:
    first, second = await asyncio.gather(migrate(empty, "hopper"), migrate(empty, "hopper"))
    assert sorted([first, second]) == [[], ALL]
    connection = await asyncpg.connect(empty)
    try:
        count = await connection.fetchval("SELECT count(*) FROM hopper.schema_migrations")
    finally:
        await connection.close()
    assert count == len(ALL)


async def test_migrations_of_two_schemas_are_independent(empty: str) -> None:
    assert await migrate(empty, "one") == ALL
    assert await migrate(empty, "two") == ALL


async def test_a_schema_newer_than_the_code_is_refused(database: str) -> None:
    connection = await asyncpg.connect(database)
    try:
        await connection.execute(
            "INSERT INTO hopper.schema_migrations (name) VALUES ('9999_future')"
        )
    finally:
        await connection.close()
    with pytest.raises(SchemaTooNew) as caught:
        await migrate(database, "hopper")
    assert caught.value.unknown == ["9999_future"]


async def test_an_unreachable_database_raises_database_unreachable() -> None:
    with pytest.raises(DatabaseUnreachable):
        await migrate("postgresql://postgres@127.0.0.1:1/test", "hopper")


async def test_a_schema_name_that_is_not_a_plain_identifier_is_refused(empty: str) -> None:
    with pytest.raises(InvalidSchemaName):
        await migrate(empty, 'x"; DROP TABLE y; --')


async def test_a_store_refuses_to_start_on_a_database_never_migrated(empty: str) -> None:
    store = PostgresQueueStore(empty, listen=False)
    with pytest.raises(SchemaNotCurrent) as caught:
        await store.start(lambda key: None)
    assert caught.value.missing == ALL


async def test_a_store_on_an_unreachable_database_raises_database_unreachable() -> None:
    store = PostgresQueueStore("postgresql://postgres@127.0.0.1:1/test", listen=False)
    with pytest.raises(DatabaseUnreachable):
        await store.start(lambda key: None)
