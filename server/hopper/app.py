"""create_app(): the one place where a concrete store is chosen and wired."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass

from starlette.applications import Starlette

from hopper import browsers
from hopper.auth.gate import from_settings
from hopper.console.api import Console
from hopper.console.history import History, sample_depths
from hopper.console.sessions import Sessions
from hopper.console.topics import TopicConsole
from hopper.core.events import Broadcast
from hopper.core.outcomes import ReceiptMode
from hopper.core.service import QueueService
from hopper.core.store import QueueStore
from hopper.declared import apply, declared_queues, guarded
from hopper.dispatch import Dispatchers
from hopper.endpoint import Handler
from hopper.http import AsgiApp, framework_errors, front, routes
from hopper.observability import scrapes
from hopper.observability.dispatch_metrics import DispatchRecorder
from hopper.observability.metrics import Recorder
from hopper.observability.overview import Counts
from hopper.observability.shutdown import Shutdown, drained_on_signals
from hopper.settings import Settings, load
from hopper.sns_assembly import SnsAssembly, assemble_sns

# How long a shutdown waits for the console's depth sampler to stop.
_SAMPLER_STOP_SECONDS = 2.0


@dataclass(frozen=True)
class Assembly:
    """A server's ASGI app and the service behind it (hopper.testing resets queues
    through the service)."""

    app: AsgiApp
    service: QueueService
    sns: SnsAssembly | None = None


def create_app(settings: Settings, *, actions: Mapping[str, Handler] | None = None) -> AsgiApp:
    """The ASGI app for `settings` (see `assemble`)."""
    return assemble(settings, actions=actions).app


def assemble(settings: Settings, *, actions: Mapping[str, Handler] | None = None) -> Assembly:
    """The ASGI app for `settings`, with its service: the in-memory store unless
    `database_url` is set, then PostgreSQL (migrated at start-up), or `nats_url`, then
    JetStream. `actions` replaces the SQS action table (tests only). The store opens in
    the app's lifespan and closes with it; the queues declared in `settings.config` are
    created or updated as it opens. Raises SettingsError for unusable credentials or
    declarations."""
    if actions is None:
        from hopper.wire.actions import ACTIONS

        actions = ACTIONS
    declared = [] if settings.config is None else declared_queues(settings.config, settings)
    if settings.declared_queues_only:
        actions = guarded(actions)
    floor = settings.visibility_floor
    store = make_store(settings)
    history = History()
    events = Broadcast(Recorder(store.dead_lettered), history)
    service = QueueService(
        store,
        enforce_timing_rules=not settings.relaxed_timing,
        visibility_floor=None if floor is None else float(floor),
        events=events,
        receipts=ReceiptMode(settings.receipts),
        dispatch_hosts=settings.dispatch_hosts(),
    )
    # Counts of its own for the depth sampler: a sample taken mid-burst must not stand
    # in for a fresh count at the next scrape (Counts keeps a count as long as it was
    # dear). Both hear which queues are in use.
    counts, sampled = Counts(service), Counts(service)
    events.add(counts)
    events.add(sampled)
    gate = from_settings(settings)
    keys = None if gate is None else gate.keys
    signed = None if keys is None else Sessions(keys, settings.console_sessions_since)
    console = Console(service, counts, history, signed=signed, home=settings.region)
    dispatchers = Dispatchers(
        service,
        region=settings.region,
        base_url=f"http://{settings.host}:{settings.port}",
        events=DispatchRecorder(),
    )
    sns = assemble_sns(settings, service)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if settings.database_url is not None:
            from hopper.enqueue.rules import migrate

            await migrate(settings.database_url, settings.database_schema)
        await service.start()
        await sns.start()
        sampler = asyncio.create_task(sample_depths(history, service, sampled))
        dispatching = asyncio.create_task(dispatchers.run(), name="hopper-dispatchers")
        try:
            if declared:
                await apply(service, declared)
            with drained_on_signals(service.drain):
                yield
        finally:
            stopping = Shutdown()
            dispatching.cancel()
            sampler.cancel()
            # Bounded: a sample stuck on an unanswering store must not hold the exit.
            await stopping.step("dispatch and sampling", asyncio.wait(
                [dispatching, sampler], timeout=_SAMPLER_STOP_SECONDS
            ))
            await stopping.step("SNS", sns.close())
            await stopping.step("queues", service.close())

    rest = Starlette(
        routes=routes(service, counts, [
            *console.routes(), *TopicConsole(sns.parts, signed=signed).routes(), *sns.routes(),
        ]),
        lifespan=lifespan,
        exception_handlers=framework_errors(),
    )
    app = front(service, settings, actions, gate, rest, sns.parts)
    app = scrapes.guard(app, scrapes.Scrapes(settings.metrics_token, keys is not None))
    return Assembly(browsers.guard(app, browsers.Browsers.from_settings(settings)), service, sns)


def create_app_from_environment() -> AsgiApp:
    """The app of one worker process of `hopper serve --workers N`: uvicorn imports it
    by name in each worker, and the parent passed its settings as `HOPPER_*` variables."""
    app = create_app(load())
    collect_less()
    return app


# A request allocates some hundreds of container objects (dicts, lists, coroutines,
# futures) that die within it: at CPython's default thresholds (700, 10, 10) the young
# generation was collected every few requests, and every seventy-odd thousand
# allocations the whole heap (the memory store's messages included) was walked. Three
# per cent of a PostgreSQL SendMessage's CPU (bench/README.md).
GC_THRESHOLDS = (10_000, 50, 100)


def collect_less() -> None:
    """Tune the cyclic garbage collector for a process that serves requests: start-up's
    objects (modules, classes, the app), which live as long as it, frozen out of every
    collection, and the young generation collected less often. For `hopper serve` and
    its workers only, not an app embedded in another program (hopper.testing), whose
    collector is its own."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def make_store(settings: Settings) -> QueueStore:
    if settings.nats_url is not None:
        # Imported only here, so the other stores never need nats-py loaded.
        from hopper.store.jetstream import JetStreamQueueStore

        urls = [url.strip() for url in settings.nats_url.split(",") if url.strip()]
        return JetStreamQueueStore(urls, replicas=settings.nats_replicas)
    if settings.database_url is None:
        from hopper.store.memory import MemoryQueueStore

        return MemoryQueueStore()
    # Imported only here, so the in-memory server never needs asyncpg loaded.
    from hopper.store.postgres import PostgresQueueStore

    return PostgresQueueStore(settings.database_url, schema=settings.database_schema)
