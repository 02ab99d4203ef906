"""The direct path: SQS calls answered from uvicorn's httptools protocol itself, with
no ASGI cycle between the parser and hopper's request path.

An SQS call through ASGI costs a scope dict, a RequestResponseCycle with its Event,
receive and send messages, the proxy-headers middleware, header checks by regex and
two writes to the socket (head, then body) -- as much CPU as the whole request of a
minimal Starlette app (bench/README.md, "The HTTP layer"). Here the protocol collects
the body as the parser hands it over, runs `Endpoint.answer` in a task and writes the
answer with one write. Everything else (the console, /health, /metrics, upgrades,
requests behind a proxy's X-Forwarded-* headers) still goes through ASGI.

It leans on uvicorn's internals: the parser callbacks, `self.cycle` (which an
`_Exchange` stands in for, so that uvicorn's pipelining, shutdown and connection_lost
treat it as the request in progress), `on_response_complete`, `server_state`. That is
why uvicorn is pinned to one version in pyproject.toml, and why
tests/server/test_direct_path.py fails, naming what to re-read, when the source of any
of those changes.
"""

from __future__ import annotations

import asyncio
import http
import logging
import urllib.parse
from collections.abc import Callable, Mapping
from typing import Any

import httptools
from uvicorn.middleware.message_logger import MessageLoggerMiddleware
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from hopper.connection_limits import GuardedProtocol
from hopper.http import Endpoint, Head, Incoming
from hopper.wire import protocol
from hopper.wire.errors import SqsError
from hopper.wire.render_json import Rendered

log = logging.getLogger("hopper.direct")

_STATUS = {
    status.value: b"HTTP/1.1 %d %s\r\n" % (status.value, status.phrase.encode())
    for status in http.HTTPStatus
}
# Headers whose meaning ProxyHeadersMiddleware applies (client address, scheme): such
# requests take the ASGI path, which runs it.
_PROXIED = frozenset({"x-forwarded-for", "x-forwarded-proto"})
# What uvicorn wraps an app in (proxy headers always, the message logger at trace
# level): transparent to the direct path, which applies the first itself (_PROXIED).
_UVICORN_WRAPPERS = (ProxyHeadersMiddleware, MessageLoggerMiddleware)


class _Departure:
    """The `message_event` uvicorn sets when the connection is lost: here it ends the
    long poll waiting on `gone` (see RequestContext.gone)."""

    __slots__ = ("_waiter",)

    def __init__(self) -> None:
        self._waiter: asyncio.Future[None] | None = None

    def set(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def wait(self) -> None:
        if self._waiter is None:
            self._waiter = asyncio.get_running_loop().create_future()
        await self._waiter


class _Exchange:
    """One SQS call served directly; it stands in `self.cycle` for uvicorn, which reads
    `response_complete`, sets `disconnected` and `keep_alive`, and calls
    `message_event.set()` when the connection is lost."""

    __slots__ = (
        "incoming", "path", "limit", "body", "keep_alive", "disconnected",
        "response_complete", "message_event",
    )

    def __init__(self, incoming: Incoming, path: str, limit: int, keep_alive: bool) -> None:
        self.incoming = incoming
        self.path = path  # percent-decoded, as an ASGI scope's
        self.limit = limit
        self.body = bytearray()
        self.keep_alive = keep_alive
        self.disconnected = False
        self.response_complete = False
        self.message_event = _Departure()

    async def gone(self) -> None:
        await self.message_event.wait()


class DirectProtocol(GuardedProtocol):
    """GuardedProtocol (the request deadline, the connection cap, SQS-shaped parse
    errors) that answers SQS calls itself."""

    endpoint: Endpoint | None = None
    checks: tuple[Check, ...] = ()  # the wrappers' checks on the way (route_of)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        route = route_of(self.app)
        if route is not None:
            self.endpoint, self.checks = route

    def on_message_begin(self) -> None:
        # uvicorn's, less its ASGI scope (a dict of ten keys and a copy of the app's
        # state): made only for a request that takes the ASGI path (_asgi_scope).
        self.url = b""
        self.expect_100_continue = False
        self.headers = []

    def on_headers_complete(self) -> None:
        exchange = self._exchange()
        if exchange is None:
            self.scope = self._asgi_scope()  # type: ignore[assignment]  # (a TypedDict)
            super().on_headers_complete()
            return
        self._head_parsed()
        self.cycle = exchange  # type: ignore[assignment]
        for check in self.checks:
            refused = check(self._scope(exchange), exchange.incoming.headers)
            if refused is not None:
                self._write(exchange, refused)
                return
        declared = exchange.incoming.headers.get("content-length")
        try:
            protocol.read_declared(declared, exchange.limit)
        except SqsError as error:
            assert self.endpoint is not None
            self._write(exchange, self.endpoint.refusal(exchange.incoming, error))
            return
        if self.expect_100_continue:
            self.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")

    def on_body(self, body: bytes) -> None:
        exchange = self.cycle
        if not isinstance(exchange, _Exchange):
            super().on_body(body)
            return
        if exchange.response_complete:
            return  # refused already: the rest of its body is skipped
        exchange.body += body
        if len(exchange.body) > exchange.limit:
            assert self.endpoint is not None
            error = protocol.body_too_large(exchange.limit)
            self._write(exchange, self.endpoint.refusal(exchange.incoming, error))

    def on_message_complete(self) -> None:
        exchange = self.cycle
        if not isinstance(exchange, _Exchange):
            super().on_message_complete()
            return
        self._request_parsed()
        if not exchange.response_complete:
            task = self.loop.create_task(self._answer(exchange))
            task.add_done_callback(self.tasks.discard)
            self.tasks.add(task)

    def _exchange(self) -> _Exchange | None:
        """The SQS call whose head was just parsed, when it can be served directly."""
        busy = self.cycle is not None and not self.cycle.response_complete
        if self.endpoint is None or busy or self.parser.should_upgrade():
            return None
        if self.root_path or self.limit_concurrency is not None:
            return None
        head = self._head()
        incoming = self.endpoint.incoming(head)
        if incoming is None or not _PROXIED.isdisjoint(incoming.headers):
            return None
        keep_alive = self.parser.get_http_version() != "1.0" and self.parser.should_keep_alive()
        return _Exchange(incoming, head.path, self.endpoint.body_limit(incoming), keep_alive)

    def _head(self) -> Head:
        parsed = httptools.parse_url(self.url)
        raw_path: bytes = parsed.path
        path = raw_path.decode("ascii")
        if "%" in path:
            path = urllib.parse.unquote(path)
        return Head(
            method=self.parser.get_method().decode("ascii"),
            path=path,
            raw_path=raw_path,
            query_string=parsed.query or b"",
            headers=self.headers,
            client=self.client[0] if self.client else None,
            scheme=self.scheme or "http",
        )

    def _asgi_scope(self) -> dict[str, Any]:
        """The scope uvicorn's on_message_begin makes, for a request on the ASGI path."""
        return {
            "type": "http",
            "asgi": {"version": self.asgi_version, "spec_version": "2.3"},
            "http_version": "1.1",
            "server": self.server,
            "client": self.client,
            "scheme": self.scheme,
            "root_path": self.root_path,
            "headers": self.headers,
            "state": self.app_state.copy(),
        }

    def _scope(self, exchange: _Exchange) -> dict[str, Any]:
        """What a wrapper's check reads of an ASGI scope, for a call served here."""
        incoming = exchange.incoming
        return {
            "type": "http", "method": incoming.method, "scheme": incoming.scheme,
            "path": exchange.path, "query_string": incoming.query_string,
            "headers": self.headers,
        }

    async def _answer(self, exchange: _Exchange) -> None:
        assert self.endpoint is not None
        try:
            rendered = await self.endpoint.answer(
                exchange.incoming, bytes(exchange.body), exchange.gone
            )
        except BaseException:  # Endpoint.answer never raises: only a cancellation can
            if not self.transport.is_closing():
                self.transport.close()
            raise
        self._write(exchange, rendered)

    def _write(self, exchange: _Exchange, rendered: Rendered) -> None:
        """The answer in one write; then, as uvicorn does after a response, close or
        start on the next pipelined request (or arm the keep-alive timers)."""
        exchange.response_complete = True
        if exchange.disconnected or self.transport.is_closing():
            return
        self.transport.write(_encoded(rendered, self.server_state.default_headers,
                                      exchange.keep_alive))
        if not exchange.keep_alive:
            self.transport.close()
        self._responded()

    def _responded(self) -> None:
        """uvicorn's on_response_complete, less its keep-alive timer: hopper sets
        uvicorn's keep-alive timeout to the idle timeout (cli.py), and the deadline armed
        here closes an idle connection at that same moment (GuardedProtocol)."""
        self.server_state.total_requests += 1
        if self.transport.is_closing():
            return
        self._unset_keepalive_if_required()  # armed after an answer through ASGI
        self.flow.resume_reading()
        if self.pipeline:
            cycle, app = self.pipeline.pop()
            self._start_asgi_task(cycle, app)
        else:
            self._await_next_request()


# The head's default lines (uvicorn's server and date headers), encoded once for each
# list uvicorn makes of them (a new one every second, for the date).
_defaults: tuple[list[tuple[bytes, bytes]] | None, bytes] = (None, b"")


def _default_lines(defaults: list[tuple[bytes, bytes]]) -> bytes:
    global _defaults
    made, lines = _defaults
    if made is not defaults:
        lines = b"".join(b"%s: %s\r\n" % pair for pair in defaults)
        _defaults = (defaults, lines)
    return lines


def _encoded(rendered: Rendered, defaults: list[tuple[bytes, bytes]], keep_alive: bool) -> bytes:
    head = [_STATUS[rendered.status], _default_lines(defaults)]
    head.append(b"content-type: %s\r\ncontent-length: %d\r\n" % (
        rendered.content_type.encode("latin-1"), len(rendered.body)))
    for key, text in rendered.headers.items():
        head.append(f"{key}: {text}\r\n".encode("latin-1"))
    if not keep_alive:
        head.append(b"connection: close\r\n")
    head += [b"\r\n", rendered.body]
    return b"".join(head)


# A wrapper's check: an ASGI scope (and the headers it holds, decoded) to its refusal.
Check = Callable[[dict[str, Any], Mapping[str, str]], Rendered | None]


def endpoint_of(app: Any) -> Endpoint | None:
    """The Endpoint of hopper's ASGI app `app` (see `route_of`), or None."""
    route = route_of(app)
    return None if route is None else route[0]


def route_of(app: Any) -> tuple[Endpoint, tuple[Check, ...]] | None:
    """The Endpoint of hopper's ASGI app `app` and the checks an SQS call must pass on
    the way, looked for through the wrappers that pass SQS calls through: uvicorn's own
    middleware and hopper's wrappers that say so (`sqs_inner`: the app they pass SQS
    calls to, unchanged; `sqs_check`: what they answer instead to a call they refuse,
    see browsers.guard). Any other wrapper may do something to a call the direct path
    would skip, so behind one the direct path is off: None, every call through ASGI."""
    seen: Any = app
    checks: list[Check] = []
    for _ in range(8):  # a handful of wrappers at most; never loop on a cycle
        endpoint = getattr(seen, "endpoint", None)
        if isinstance(endpoint, Endpoint):
            return endpoint, tuple(checks)
        if isinstance(seen, _UVICORN_WRAPPERS):
            seen = seen.app
        elif getattr(seen, "sqs_inner", None) is not None:
            check = getattr(seen, "sqs_check", None)
            if check is not None:
                checks.append(check)
            seen = seen.sqs_inner
        else:
            return None
    return None
