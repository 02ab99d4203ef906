"""Running uvicorn for `hopper serve` so that a start that cannot succeed says why in
one line. The socket is bound before anything else starts (a port in use is refused
before the store is touched, with no errno line from uvicorn); "listening on" is said
once the server listens; and a start-up the app refuses (a declared queue the store
will not take) is one line, not Starlette's traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import socket
from collections.abc import Callable
from typing import Any

import uvicorn

from hopper.http import AsgiApp
from hopper.settings import SettingsError

log = logging.getLogger("hopper")

# What uvicorn says after a failed lifespan start-up, which would follow hopper's own line.
_UVICORN_STARTUP_FAILED = "Application startup failed. Exiting."


class StartRefused(Exception):
    """The server cannot start; the message is the one line that says why."""


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0: a free one), as uvicorn would bind it.
    Raises StartRefused when the address is in use or cannot be bound."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(2048)  # uvicorn's default backlog; it listens again with its own
    except OSError as error:
        sock.close()
        if error.errno == errno.EADDRINUSE:
            raise StartRefused(
                f"port {port} on {host} is in use: stop what listens there or choose"
                " another --port (HOPPER_PORT)"
            ) from None
        raise StartRefused(f"cannot listen on {host}:{port}: {error.strerror}") from None
    sock.set_inheritable(True)  # the worker processes of --workers share it
    return sock


def url_of(sock: socket.socket, host: str) -> str:
    return f"http://{host}:{sock.getsockname()[1]}"


def run(app: AsgiApp, sock: socket.socket, host: str, options: dict[str, Any]) -> None:
    """Serve `app` on the bound `sock` until a signal stops it. Raises StartRefused when
    the app's start-up refused to start (its SettingsError, in one line)."""
    refusals: list[str] = []
    config = uvicorn.Config(refusing_in_one_line(app, refusals.append), **options)
    # Added after uvicorn.Config has set up logging, which would drop the filter.
    logging.getLogger("uvicorn.error").addFilter(_QuietAfterRefusal(refusals))
    server = Server(config, on_started=lambda: log.info(
        "hopper: listening on %s", url_of(sock, host)))
    try:
        server.run(sockets=[sock])
    except SystemExit:
        if refusals:
            raise StartRefused(refusals[0]) from None
        raise


def run_workers(sock: socket.socket, host: str, options: dict[str, Any], workers: int) -> None:
    """`workers` uvicorn worker processes serving on the bound `sock`, supervised by this
    one (which restarts a worker that dies, and stops them on SIGINT/SIGTERM). Each
    builds its app from the `HOPPER_*` environment (hopper.app)."""
    from uvicorn.supervisors import Multiprocess

    config = uvicorn.Config(
        "hopper.app:create_app_from_environment", factory=True, workers=workers, **options
    )
    log.info("hopper: listening on %s, %d worker processes", url_of(sock, host), workers)
    # On Ctrl-C the supervisor stops its workers, then the interrupt reaches here.
    with contextlib.suppress(KeyboardInterrupt):
        Multiprocess(config, sockets=[sock]).run()


def refusing_in_one_line(app: AsgiApp, refused: Callable[[str], None]) -> AsgiApp:
    """`app`, whose lifespan start-up failure by SettingsError is reported to uvicorn as
    that error's one line (Starlette reports a traceback), and to `refused`."""

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "lifespan":
            await app(scope, receive, send)
            return
        held: list[Any] = []

        async def holding(message: Any) -> None:
            if message["type"] == "lifespan.startup.failed":
                held.append(message)  # sent once the exception says what it was
                return
            await send(message)

        try:
            await app(scope, receive, holding)
        except SettingsError as error:
            if not held:
                raise
            refused(f"hopper: {error}")
            # No message: uvicorn would log it; the caller says it, once.
            await send({"type": "lifespan.startup.failed", "message": ""})
        except BaseException:
            for message in held:
                await send(message)
            raise

    # SQS calls pass through unchanged: the direct path (hopper/direct.py) may serve
    # them from `app`'s endpoint.
    wrapped.sqs_inner = app  # type: ignore[attr-defined]
    return wrapped


def started_once(app: AsgiApp) -> None:
    """Run `app`'s lifespan start-up and shut it down again: how the parent of
    `--workers N` learns, before it starts any worker, that the app can start (each
    worker would otherwise fail alike and be restarted for ever). Raises StartRefused."""

    async def drive() -> list[str]:
        incoming: asyncio.Queue[dict[str, str]] = asyncio.Queue()
        for kind in ("lifespan.startup", "lifespan.shutdown"):
            incoming.put_nowait({"type": kind})

        async def send(message: Any) -> None:
            pass  # a failure surfaces as the exception Starlette re-raises

        refusals: list[str] = []
        scope = {"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}
        await refusing_in_one_line(app, refusals.append)(scope, incoming.get, send)
        return refusals

    try:
        refusals = asyncio.run(drive())
    except Exception as error:  # any reason at all: one line, no traceback
        raise StartRefused(f"hopper: the server cannot start: {error}") from None
    if refusals:
        raise StartRefused(refusals[0])


class Server(uvicorn.Server):
    """uvicorn's server, which says "listening on" only once it listens."""

    def __init__(self, config: uvicorn.Config, on_started: Callable[[], None]) -> None:
        super().__init__(config)
        self._on_started = on_started

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            self._on_started()


class _QuietAfterRefusal(logging.Filter):
    """Drops uvicorn's closing line after a refusal hopper has said in its own line."""

    def __init__(self, refusals: list[str]) -> None:
        super().__init__()
        self._refusals = refusals

    def filter(self, record: logging.LogRecord) -> bool:
        return not (self._refusals and record.getMessage() == _UVICORN_STARTUP_FAILED)
