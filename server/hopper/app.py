"""create_app(): the one place where a concrete store is chosen and wired."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

from starlette.applications import Starlette

from hopper.core.service import QueueService
from hopper.http import Handler, routes
from hopper.settings import Settings, load
from hopper.store.base import QueueStore


def create_app(settings: Settings, *, actions: Mapping[str, Handler] | None = None) -> Starlette:
    """The ASGI app for `settings`: the in-memory store unless `database_url` is set,
    then PostgreSQL (migrated at start-up). `actions` replaces the SQS action table
    (tests only). The store opens in the app's lifespan and closes with it."""
    if actions is None:
        from hopper.wire.actions import ACTIONS

        actions = ACTIONS
    floor = settings.visibility_floor
    service = QueueService(
        make_store(settings),
        enforce_timing_rules=not settings.relaxed_timing,
        visibility_floor=None if floor is None else float(floor),
    )

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if settings.database_url is not None:
            from hopper.store.schema import migrate

            await migrate(settings.database_url, settings.database_schema)
        await service.start()
        try:
            yield
        finally:
            await service.close()

    app = Starlette(routes=routes(service, settings, actions), lifespan=lifespan)
    app.state.service = service
    app.state.settings = settings
    return app


def create_app_from_environment() -> Starlette:
    """The app of one worker process of `hopper serve --workers N`: uvicorn imports it
    by name in each worker, and the parent passed its settings as `HOPPER_*` variables."""
    return create_app(load())


def make_store(settings: Settings) -> QueueStore:
    if settings.database_url is None:
        from hopper.store.memory import MemoryQueueStore

        return MemoryQueueStore()
    # Imported only here, so the in-memory server never needs asyncpg loaded.
    from hopper.store.postgres import PostgresQueueStore

    return PostgresQueueStore(settings.database_url, schema=settings.database_schema)
