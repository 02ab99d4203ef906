"""When the database cannot answer, /metrics and the dashboard's feeds say so with a
503 (Prometheus then records a failed scrape) instead of a 500 or stale numbers, and
recover by themselves."""

from __future__ import annotations

import asyncio
from pathlib import Path

import asyncpg
import httpx

from .conftest import SERVER_SCHEMA, store_options
from .processes import start_hopper


def rename_schema(dsn: str, old: str, new: str) -> None:
    async def rename() -> None:
        connection = await asyncpg.connect(dsn)
        try:
            await connection.execute(f"ALTER SCHEMA {old} RENAME TO {new}")
        finally:
            await connection.close()

    asyncio.run(rename())


def test_an_unreachable_store_is_a_503_until_it_is_back(tmp_path: Path) -> None:
    with store_options("postgres") as options:
        dsn = options[options.index("--database-url") + 1]
        server = start_hopper(*options, log=tmp_path / "hopper.log")
        try:
            # The store's statements now find no tables (none was prepared before).
            rename_schema(dsn, SERVER_SCHEMA, "away")
            scrape = httpx.get(f"{server.url}/metrics")
            assert scrape.status_code == 503
            assert "the store is unavailable" in scrape.text
            feed = httpx.get(f"{server.url}/dashboard/api/queues")
            assert feed.status_code == 503
            assert "the store is unavailable" in feed.json()["error"]
            rename_schema(dsn, "away", SERVER_SCHEMA)
            assert httpx.get(f"{server.url}/metrics").status_code == 200
            assert httpx.get(f"{server.url}/dashboard/api/queues").status_code == 200
        finally:
            code = server.stop()
    assert code == 0, server.output()
