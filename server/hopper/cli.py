"""The `hopper` command: `hopper serve`, `hopper migrate`, `hopper --version`.

Exit codes: 0 after a clean shutdown (Ctrl-C or SIGTERM), 2 when the settings, the
port, the store or a declared queue cannot be used (one line on stderr, no traceback),
uvicorn's own otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import logging
import os
import shutil
import signal
import socket
import sys
import tempfile
import textwrap
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from hopper import __version__, native
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
    parser = argparse.ArgumentParser(
        prog="hopper", description="An SQS-compatible queue server.", formatter_class=_Help,
        epilog="Flags win over HOPPER_* environment variables, which win over the"
        " [settings] of --config, which win over the defaults.",
    )
    parser.add_argument("--version", action="version", version=f"hopper {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run the server", epilog=parser.epilog,
                                formatter_class=_Help)
    for flag, text, extra in _SERVE_OPTIONS:
        _option(serve, flag, text, **extra)
    migrate = commands.add_parser("migrate", help="migrate the database schema",
                                  formatter_class=_Help)
    for command in (serve, migrate):
        _option(command, "--database-url", "PostgreSQL to keep the queues in, migrated at"
                " start-up", none="the in-memory store", metavar="URL")
        _option(command, "--database-schema", "the schema of hopper's tables",
                metavar="NAME")
    return parser


class _Help(argparse.HelpFormatter):
    """argparse's help, never wrapping inside us-east-1 or --credentials-file."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)


# `hopper serve`'s options but the database's: flag, what it does, argparse's extras
# (`none`: what no value means). Each help line ends with its environment variable and
# default, taken from Settings, so the two cannot disagree.
_SERVE_OPTIONS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("--host", "address to listen on (0.0.0.0: every interface)", {}),
    ("--port", "port to listen on", {"type": int}),
    ("--account-id", "the account of requests with auth off, and of queue URLs and ARNs",
     {"metavar": "ID"}),
    ("--region", "this server's region: its queue URLs are short, other regions' name"
     " theirs", {}),
    ("--max-body-bytes", "largest request body read", {"type": int, "metavar": "N"}),
    ("--log-level", "least important log lines written",
     {"choices": ["debug", "info", "warning", "error"]}),
    ("--log-format", "json: one JSON object per line", {"choices": ["text", "json"]}),
    ("--workers", "server processes on one port (needs --database-url or --nats-url)",
     {"type": int, "metavar": "N"}),
    ("--visibility-floor", "raise shorter visibility timeouts to this",
     {"type": int, "metavar": "SECONDS", "none": "no floor"}),
    # store_const with default None: an absent flag leaves the environment in charge.
    ("--relaxed-timing", "drop AWS's 60-second rules (re-create after delete, purge"
     " interval)", {"action": "store_const", "const": True}),
    ("--auth", "sigv4: verify AWS Signature V4 against --credentials-file",
     {"choices": ["off", "sigv4"]}),
    ("--receipts", "superseded receipts: strict refuses them, aws answers as AWS does",
     {"choices": RECEIPT_MODES}),
    ("--credentials-file", "TOML [[credentials]]: access_key, secret_key, account_id"
     " (--auth sigv4)", {"metavar": "FILE", "none": "HOPPER_CREDENTIALS holds them inline"}),
    ("--rate-limit", "requests per second per access key (per client address with auth"
     " off)", {"type": int, "metavar": "N", "none": "no limit"}),
    ("--config", "TOML file: [settings] and declared [[queues]]", {"metavar": "FILE"}),
    ("--declared-queues-only", "refuse CreateQueue (but of an existing queue) and"
     " DeleteQueue over the API", {"action": "store_const", "const": True}),
    ("--idle-timeout", "close a connection that has not sent a whole request this long"
     " after opening or after its previous answer", {"type": int, "metavar": "SECONDS"}),
    ("--max-connections", "answer 503 to connections beyond N open at once, per process",
     {"type": int, "metavar": "N", "none": "the open-files limit less 100"}),
    ("--max-connections-per-address", "the most of --max-connections one client address"
     " may hold (the rest are answered 503)", {"type": int, "metavar": "N",
                                               "none": "half of --max-connections"}),
    ("--allow-origin", "origins (https://host[:port], comma-separated, * for all) whose"
     " web pages may call hopper, beyond its console", {"metavar": "ORIGINS",
                                                       "none": "the console's own"}),
    ("--allow-host", "Host names answered beyond localhost and IP addresses"
     " (comma-separated, * for all); given, also when not listening on loopback",
     {"metavar": "NAMES", "none": "localhost and IP addresses"}),
    ("--metrics-token", "a bearer token every scrape of /metrics must send (better in the"
     " environment: flags show in ps)", {"metavar": "TOKEN",
                                       "none": "none; /metrics refused with --auth sigv4"}),
    ("--console-sessions-since", "void every console session issued before this time"
     " (epoch seconds: $(date +%%s) revokes them all)", {"type": int, "metavar": "EPOCH",
                                                        "none": "none"}),
    ("--nats-url", "the JetStream store: nats://host:4222[,nats://host2:4222,...]; needs"
     " nats-server 2.11+ with JetStream and max_payload: 8MB (refused at start-up otherwise)",
     {"metavar": "URLS"}),
    ("--nats-replicas", "replicas of every JetStream stream and bucket hopper creates",
     {"type": int, "metavar": "N"}),
    ("--dispatch-allow", "with --auth sigv4, the hosts a queue's Hopper.Dispatch may"
     " name: comma-separated patterns (*.svc.local, 10.0.0.0/8)",
     {"metavar": "HOSTS", "none": "loopback only"}),
)


def _option(parser: argparse.ArgumentParser, flag: str, text: str, *, none: str = "none",
            **extra: Any) -> None:
    """Add `flag`, its help ending with its HOPPER_* variable and Settings' default."""
    name = flag.removeprefix("--").replace("-", "_")
    default = getattr(Settings(), name)
    if isinstance(default, bool):
        shown = "on" if default else "off"
    else:
        shown = none if default is None else str(default)
    parser.add_argument(flag, help=f"{text} [env HOPPER_{name.upper()}; default: {shown}]",
                        **extra)


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
    from hopper.enqueue.rules import migrate

    try:
        return asyncio.run(migrate(settings.database_url, settings.database_schema))
    except Exception as error:  # any reason at all: one line, no traceback
        where = describe_database(settings.database_url)
        print(f"hopper: cannot use the database at {where}: {error}", file=sys.stderr)
        return None


def _serve(settings: Settings) -> int:
    from hopper import serving

    refusal = _workers_refusal(settings)
    if refusal is not None:
        print(f"hopper: {refusal}", file=sys.stderr)
        return EXIT_UNUSABLE
    try:
        # Bound first: a port in use is one line, before the store is touched.
        sock = serving.bind(settings.host, settings.port)
    except serving.StartRefused as refused:
        print(f"hopper: {refused}", file=sys.stderr)
        return EXIT_UNUSABLE
    with sock:
        try:
            return _serve_on(settings, sock)
        except serving.StartRefused as refused:
            print(refused, file=sys.stderr)
            return EXIT_UNUSABLE


def _serve_on(settings: Settings, sock: socket.socket) -> int:
    """Serve on the bound `sock`; 0 after a clean shutdown, EXIT_UNUSABLE after saying
    why the store, the settings or a declared queue cannot be used."""
    from hopper import serving
    from hopper.app import collect_less, create_app

    if not _store_usable(settings):
        return EXIT_UNUSABLE
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
    _say_compiled()
    log.info("hopper: queues declared: %s", _declared_text(settings))
    if options["http"] != "auto":
        from hopper.connection_limits import configure

        limits = configure(settings)
        log.info(
            "hopper: connections: at most %d open, %d per client address, %d s to send a"
            " request", limits.max_connections, limits.per_address, limits.idle_timeout,
        )
    if settings.workers > 1:
        # Started once here, so a declared queue the store refuses is one line, not
        # every worker failing alike.
        serving.started_once(app)
        return _serve_workers(settings, sock, options)
    # uvicorn shuts down gracefully on SIGINT/SIGTERM and then re-raises the signal to
    # the handler that was installed before it; a clean shutdown should exit 0 instead.
    for handled in (signal.SIGINT, signal.SIGTERM):
        signal.signal(handled, lambda *_: None)
    collect_less()
    serving.run(app, sock, settings.host, options)
    return 0


def _say_compiled() -> None:
    """How many modules run compiled (setup.py, hopper/native.py), and warn of any that
    runs older code than its source says (an editable install's, after an edit)."""
    compiled = native.compiled()
    if compiled:
        log.info("hopper: %d modules compiled (mypyc)", len(compiled))
    else:
        log.info("hopper: pure Python (no module compiled)")
    for source in native.stale():
        log.warning(
            "hopper: %s was edited after it was compiled, and runs as compiled:"
            " run `pip install -e .` again", source,
        )


def _store_usable(settings: Settings) -> bool:
    """Say which store serves; False after saying why it cannot be used."""
    if settings.database_url is not None:
        # Checked before uvicorn starts, so an unreachable database is one clear line.
        if _migrated(settings) is None:
            return False
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
            return False
        log.info(
            "hopper: JetStream store at %s, %d replica(s)",
            settings.nats_url, settings.nats_replicas,
        )
    else:
        log.info("hopper: in-memory store (messages are lost on exit)")
    return True


def _http_protocol() -> Any:
    """uvicorn's httptools protocol with hopper's connection limits (hopper.connection_limits)
    and SQS calls served without an ASGI cycle (hopper.direct), or uvicorn's pick (h11)
    without httptools: idle connections then close after the idle timeout, but nothing
    bounds a slow request or the number of connections."""
    if not _importable("httptools"):
        log.warning("hopper: without httptools ('.[fast]') slow requests are not timed out")
        return "auto"
    from hopper.direct import DirectProtocol

    return DirectProtocol


def _declared_text(settings: Settings) -> str:
    if settings.config is None:
        return "none"
    from hopper.declared import declared_queues

    names = [queue.key.name for queue in declared_queues(settings.config, settings)]
    return f"{len(names)} ({', '.join(names)})" if names else "none"


def schema_version() -> str:
    """The newest migration this hopper has (the database was just migrated to it)."""
    from hopper.store.postgres.schema import migrations

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


def _serve_workers(settings: Settings, sock: socket.socket, options: dict[str, Any]) -> int:
    """N uvicorn worker processes on the bound socket, supervised by this one. Each
    worker builds its app from the settings passed down as `HOPPER_*` variables; the
    database was migrated once, above."""
    from hopper import serving
    from hopper.settings import as_environment

    os.environ.update(as_environment(settings))
    # Counters and histograms of all workers, summed by whichever answers a scrape.
    directory = tempfile.mkdtemp(prefix="hopper-metrics-")
    os.environ[metrics.MULTIPROCESS_VARIABLE] = directory
    try:
        serving.run_workers(sock, settings.host, options, settings.workers)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    return 0


def describe_database(url: str) -> str:
    """`host/database` of a database URL, without its credentials."""
    parts = urlsplit(url)
    return f"{parts.hostname or 'localhost'}/{parts.path.lstrip('/')}"


def _importable(module: str) -> bool:
    return importlib.util.find_spec(module) is not None
