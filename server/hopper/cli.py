"""The `hopper` command: `hopper serve`, `hopper migrate`, `hopper --version`.

Exit codes: 0 after a clean shutdown (Ctrl-C or SIGTERM), 2 when the settings or the
database cannot be used (one line on stderr, no traceback), uvicorn's own otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import logging
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from hopper import __version__
from hopper.core.outcomes import RECEIPT_MODES
from hopper.observability import logs, metrics, shutdown
from hopper.settings import Settings, SettingsError, load

log = logging.getLogger("hopper")

EXIT_UNUSABLE = 2


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        settings = load(_flags(args))
    except SettingsError as error:
        print(f"hopper: {error}", file=sys.stderr)
        return EXIT_UNUSABLE
    logs.configure(settings.log_format, settings.log_level)
    if args.command == "migrate":
        return _migrate(settings)
    return _serve(settings)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hopper", description="An SQS-compatible queue server.")
    parser.add_argument("--version", action="version", version=f"hopper {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run the server")
    serve.add_argument("--host")
    serve.add_argument("--port", type=int)
    serve.add_argument("--account-id")
    serve.add_argument("--region")
    serve.add_argument("--max-body-bytes", type=int)
    serve.add_argument("--log-level", choices=["debug", "info", "warning", "error"])
    serve.add_argument(
        "--log-format", choices=["text", "json"], help="json: one JSON object per line"
    )
    serve.add_argument(
        "--workers", type=int, help="server processes over one database (default 1)"
    )
    serve.add_argument(
        "--visibility-floor", type=int, metavar="SECONDS",
        help="raise shorter visibility timeouts to this (default: no floor)",
    )
    # store_const with default None: an absent flag leaves the environment in charge.
    serve.add_argument(
        "--relaxed-timing", action="store_const", const=True,
        help="drop AWS's 60-second rules (re-create after delete, purge interval)",
    )
    serve.add_argument("--auth", choices=["off", "sigv4"], help="verify AWS SigV4 (default off)")
    serve.add_argument(
        "--receipts", choices=RECEIPT_MODES,
        help="superseded receipts: strict refuses them (default), aws answers as AWS does",
    )
    serve.add_argument(
        "--credentials-file", metavar="FILE",
        help="TOML [[credentials]]: access_key, secret_key, account_id (--auth sigv4)",
    )
    serve.add_argument(
        "--rate-limit", type=int, metavar="N",
        help="requests per second per access key (per client address with auth off)",
    )
    serve.add_argument(
        "--config", metavar="FILE", help="TOML file: [settings] and declared [[queues]]"
    )
    serve.add_argument(
        "--declared-queues-only", action="store_const", const=True,
        help="refuse CreateQueue (but of an existing queue) and DeleteQueue over the API",
    )
    serve.add_argument(
        "--idle-timeout", type=int, metavar="SECONDS",
        help="close a connection that has not sent a whole request this long after opening"
        " or after its previous answer (default 15)",
    )
    serve.add_argument(
        "--max-connections", type=int, metavar="N",
        help="answer 503 to connections beyond N open at once, per process (default: the"
        " open-files limit less 100)",
    )
    serve.add_argument(
        "--nats-url", metavar="URLS",
        help="the JetStream store: nats://host:4222[,nats://host2:4222,...]",
    )
    serve.add_argument(
        "--nats-replicas", type=int, metavar="N",
        help="replicas of every JetStream stream and bucket hopper creates (default 1)",
    )
    for command in (serve, commands.add_parser("migrate", help="migrate the database schema")):
        command.add_argument("--database-url")
        command.add_argument("--database-schema")
    return parser


def _flags(args: argparse.Namespace) -> dict[str, Any]:
    return {name: value for name, value in vars(args).items() if name != "command"}


def _migrate(settings: Settings) -> int:
    if settings.database_url is None:
        print("hopper: migrate needs --database-url or HOPPER_DATABASE_URL", file=sys.stderr)
        return EXIT_UNUSABLE
    applied = _migrated(settings)
    if applied is None:
        return EXIT_UNUSABLE
    print("\n".join(f"applied {name}" for name in applied) or "schema is up to date")
    return 0


def _migrated(settings: Settings) -> list[str] | None:
    """Migrate the database; None (after saying why on stderr) when it cannot be used."""
    assert settings.database_url is not None
    from hopper.send_rules import migrate

    try:
        return asyncio.run(migrate(settings.database_url, settings.database_schema))
    except Exception as error:  # any reason at all: one line, no traceback
        where = describe_database(settings.database_url)
        print(f"hopper: cannot use the database at {where}: {error}", file=sys.stderr)
        return None


def _serve(settings: Settings) -> int:
    import uvicorn

    from hopper.app import create_app

    refusal = _workers_refusal(settings)
    if refusal is not None:
        print(f"hopper: {refusal}", file=sys.stderr)
        return EXIT_UNUSABLE
    if settings.database_url is not None:
        # Checked before uvicorn starts, so an unreachable database is one clear line.
        if _migrated(settings) is None:
            return EXIT_UNUSABLE
        where = describe_database(settings.database_url)
        log.info(
            "hopper: PostgreSQL store at %s schema %s, schema version %s",
            where, settings.database_schema, schema_version(),
        )
    elif settings.nats_url is not None:
        # Checked before uvicorn starts, so an unreachable JetStream is one clear line.
        problem = _jetstream_problem(settings)
        if problem is not None:
            where = settings.nats_url
            print(f"hopper: cannot use JetStream at {where}: {problem}", file=sys.stderr)
            return EXIT_UNUSABLE
        log.info(
            "hopper: JetStream store at %s, %d replica(s)",
            settings.nats_url, settings.nats_replicas,
        )
    else:
        log.info("hopper: in-memory store (messages are lost on exit)")
    log.info("hopper: listening on http://%s:%d", settings.host, settings.port)
    options: dict[str, Any] = {
        "host": settings.host,
        "port": settings.port,
        "log_level": settings.log_level,
        "loop": "uvloop" if _importable("uvloop") else "auto",
        "http": _http_protocol(),
        "timeout_keep_alive": settings.idle_timeout,
        # SQS has no websockets: an upgrade request is answered as the HTTP request it is.
        "ws": "none",
        "lifespan": "on",
        # hopper logs each request itself (observability/requests.py), with its id.
        "access_log": False,
        "log_config": logs.config(settings.log_format, settings.log_level),
        "timeout_graceful_shutdown": shutdown.GRACE_SECONDS,
    }
    try:
        # Built before uvicorn starts (also for workers, which build their own), so
        # unusable credentials or declarations are one clear line, not a traceback.
        app = create_app(settings)
    except SettingsError as error:
        print(f"hopper: {error}", file=sys.stderr)
        return EXIT_UNUSABLE
    log.info("hopper: auth %s%s", settings.auth, _rate_text(settings))
    log.info("hopper: receipts %s", settings.receipts)
    log.info("hopper: queues declared: %s", _declared_text(settings))
    if options["http"] != "auto":
        from hopper.connections import configure

        limits = configure(settings)
        log.info(
            "hopper: connections: at most %d open, %d s to send a request",
            limits.max_connections, limits.idle_timeout,
        )
    if settings.workers > 1:
        return _serve_workers(settings, options)
    config = uvicorn.Config(app, **options)
    # uvicorn shuts down gracefully on SIGINT/SIGTERM and then re-raises the signal to
    # the handler that was installed before it; a clean shutdown should exit 0 instead.
    for handled in (signal.SIGINT, signal.SIGTERM):
        signal.signal(handled, lambda *_: None)
    uvicorn.Server(config).run()
    return 0


def _http_protocol() -> Any:
    """uvicorn's httptools protocol with hopper's connection limits (hopper.connections),
    or uvicorn's pick (h11) without httptools: idle connections then close after the
    idle timeout, but nothing bounds a slow request or the number of connections."""
    if not _importable("httptools"):
        log.warning("hopper: without httptools ('.[fast]') slow requests are not timed out")
        return "auto"
    from hopper.connections import GuardedProtocol

    return GuardedProtocol


def _declared_text(settings: Settings) -> str:
    if settings.config is None:
        return "none"
    from hopper.declared import declared_queues

    names = [queue.key.name for queue in declared_queues(settings.config, settings)]
    return f"{len(names)} ({', '.join(names)})" if names else "none"


def schema_version() -> str:
    """The newest migration this hopper has (the database was just migrated to it)."""
    from hopper.store.schema import migrations

    return migrations()[-1][0]


def _rate_text(settings: Settings) -> str:
    if settings.rate_limit is None:
        return ""
    caller = "access key" if settings.auth != "off" else "client address"
    return f", rate limit {settings.rate_limit} requests/s per {caller}"


def _jetstream_problem(settings: Settings) -> str | None:
    """Why JetStream cannot be used (unreachable, refusing the stream or buckets), or None."""
    from hopper.app import make_store
    from hopper.core.errors import StoreUnavailable

    async def probe() -> None:
        store = make_store(settings)
        try:
            await store.start(lambda key, count: None)
        finally:
            await store.close()

    try:
        asyncio.run(probe())
    except StoreUnavailable as error:
        return str(error)
    return None


def _workers_refusal(settings: Settings) -> str | None:
    """Why `settings.workers` cannot be served, or None when it can."""
    if settings.workers < 1:
        return f"--workers must be at least 1, not {settings.workers}"
    if settings.workers > 1 and settings.database_url is None and settings.nats_url is None:
        # Each process would hold queues of its own: one queue service would look like
        # N inconsistent ones, each answering a random share of the requests.
        return (
            f"--workers {settings.workers} needs --database-url (or HOPPER_DATABASE_URL)"
            " or --nats-url:"
            " the in-memory store lives inside one process and cannot be shared"
        )
    return None


def _serve_workers(settings: Settings, options: dict[str, Any]) -> int:
    """N uvicorn worker processes on one socket, supervised by this one (which restarts a
    worker that dies). Each worker builds its app from the settings passed down as
    `HOPPER_*` variables; the database was migrated once, above."""
    import uvicorn

    from hopper.settings import as_environment

    os.environ.update(as_environment(settings))
    # Counters and histograms of all workers, summed by whichever answers a scrape.
    directory = tempfile.mkdtemp(prefix="hopper-metrics-")
    os.environ[metrics.MULTIPROCESS_VARIABLE] = directory
    try:
        # uvicorn's supervisor handles SIGINT/SIGTERM itself: it stops the workers and
        # returns.
        uvicorn.run(
            "hopper.app:create_app_from_environment",
            factory=True,
            workers=settings.workers,
            **options,
        )
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    return 0


def describe_database(url: str) -> str:
    """`host/database` of a database URL, without its credentials."""
    parts = urlsplit(url)
    return f"{parts.hostname or 'localhost'}/{parts.path.lstrip('/')}"


def _importable(module: str) -> bool:
    return importlib.util.find_spec(module) is not None
