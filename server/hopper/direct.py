"""The direct path: SQS calls answered from uvicorn's httptools protocol itself, with
no ASGI cycle between the parser and hopper's request path.

An SQS call through ASGI costs a scope dict, a RequestResponseCycle with its Event,
receive and send messages, the proxy-headers middleware, header checks by regex and
two writes to the socket (head, then body) -- as much CPU as the whole request of a
minimal Starlette app (bench/README.md, "The HTTP layer"). Here the protocol collects
the body as the parser hands it over, runs `Endpoint.answer` in a task and writes the
answer with one write. Everything else (the console, /health, /metrics, upgrades,
requests behind a proxy's X-Forwarded-* headers) still goes through ASGI.

What it does for each call (the head read into an `Exchange`, the checks, the body,
the answer's bytes) is hopper/exchanges.py's, compiled; this subclass of uvicorn's
protocol, which mypyc cannot compile, keeps what touches uvicorn's state.

It leans on uvicorn's internals: the parser callbacks, `self.cycle` (which an
`Exchange` stands in for, so that uvicorn's pipelining, shutdown and connection_lost
treat it as the request in progress), `on_response_complete`, `server_state`. That is
why uvicorn is pinned to one version in pyproject.toml, and why
tests/server/test_direct_path.py fails, naming what to re-read, when the source of any
of those changes.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from uvicorn.middleware.message_logger import MessageLoggerMiddleware
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from hopper import exchanges
from hopper.connection_limits import GuardedProtocol
from hopper.endpoint import Endpoint
from hopper.exchanges import Check, Exchange
from hopper.wire.render_json import Rendered

log = logging.getLogger("hopper.direct")

# What uvicorn wraps an app in (proxy headers always, the message logger at trace
# level): transparent to the direct path, which applies the first itself (requests
# with a proxy's headers take the ASGI path, see exchanges.exchange).
_UVICORN_WRAPPERS = (ProxyHeadersMiddleware, MessageLoggerMiddleware)


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
        refused = exchange.refusal(self.checks, self.headers)
        if refused is not None:
            self._write(exchange, refused)
        elif self.expect_100_continue:
            self.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")

    def on_body(self, body: bytes) -> None:
        exchange = self.cycle
        if not isinstance(exchange, Exchange):
            super().on_body(body)
            return
        if exchange.response_complete:
            return  # refused already: the rest of its body is skipped
        refused = exchange.take(body)
        if refused is not None:
            self._write(exchange, refused)

    def on_message_complete(self) -> None:
        exchange = self.cycle
        if not isinstance(exchange, Exchange):
            super().on_message_complete()
            return
        self._request_parsed()
        if not exchange.response_complete:
            task = self.loop.create_task(self._answer(exchange))
            task.add_done_callback(self.tasks.discard)
            self.tasks.add(task)

    def _exchange(self) -> Exchange | None:
        """The SQS call whose head was just parsed, when it can be served directly."""
        busy = self.cycle is not None and not self.cycle.response_complete
        if self.endpoint is None or busy or self.parser.should_upgrade():
            return None
        if self.root_path or self.limit_concurrency is not None:
            return None
        return exchanges.exchange(
            self.endpoint, self.url, self.parser, self.headers, self.client, self.scheme
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

    async def _answer(self, exchange: Exchange) -> None:
        try:
            rendered = await exchange.answer()
        except BaseException:  # Endpoint.answer never raises: only a cancellation can
            if not self.transport.is_closing():
                self.transport.close()
            raise
        self._write(exchange, rendered)

    def _write(self, exchange: Exchange, rendered: Rendered) -> None:
        """The answer in one write; then, as uvicorn does after a response, close or
        start on the next pipelined request (or arm the keep-alive timers)."""
        exchange.response_complete = True
        if exchange.disconnected or self.transport.is_closing():
            return
        self.transport.write(exchanges.encoded(
            rendered, self.server_state.default_headers, exchange.keep_alive))
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
