"""The HTTP side through ASGI: SQS calls handed to the endpoint (hopper/endpoint.py),
and the routes of everything else (health, metrics, the dashboard).

SQS calls are served by `front`, a plain ASGI app in front of Starlette: they are the
hot path, and Starlette's middleware, routing and request/response objects cost about
as much CPU per call as the queue work of a send. Everything else goes to Starlette.
(`hopper serve` answers SQS calls from uvicorn's protocol instead, hopper/direct.py;
this app serves them behind a proxy's headers, or under another ASGI server.)

This module stays interpreted: Starlette and uvicorn tell an async endpoint or ASGI
app by `inspect`, which does not see a compiled function as one, and the body is read
with an async generator, which mypyc does not compile. The per-call work is the
endpoint's, which runs compiled.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, MutableMapping, Sequence
from functools import partial
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

from hopper.auth.gate import Gate
from hopper.core.errors import StoreUnavailable
from hopper.core.ids import new_id
from hopper.core.service import QueueService
from hopper.core.store import ServingState
from hopper.endpoint import Endpoint, Handler, Head, render_error
from hopper.observability import dashboard
from hopper.observability.metrics import CONTENT_TYPE, scrape
from hopper.observability.overview import Counts
from hopper.settings import Settings
from hopper.wire import errors, protocol
from hopper.wire.render_json import Rendered
from hopper.wire.sns.parts import Sns

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
AsgiApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_EVERY_METHOD = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE"]


class Disconnected(Exception):
    """The client went away before its request body arrived: nobody to answer."""


def front(
    service: QueueService,
    settings: Settings,
    actions: Mapping[str, Handler],
    gate: Gate | None,
    rest: AsgiApp,
    sns: Sns | None = None,
) -> AsgiApp:
    """The server's ASGI app: SQS calls on `/` and queue URLs `/<account>/<name>` (both
    protocols, GET and POST) served here, and SNS calls (`sns`) on `/`, everything else
    by `rest` (Starlette). The app carries its `Endpoint` as `app.endpoint` for the
    direct path."""
    endpoint = Endpoint(service, settings, actions, gate, sns)

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        incoming = endpoint.incoming(_head(scope)) if scope["type"] == "http" else None
        if incoming is None:
            await rest(scope, receive, send)
            return
        try:
            body = await _read_body(receive, incoming.headers, endpoint.body_limit(incoming))
        except Disconnected:
            return
        except errors.SqsError as error:
            rendered = endpoint.refusal(incoming, error)
        else:
            rendered = await endpoint.answer(incoming, body, _departure(receive))
        await _send(send, rendered)

    app.endpoint = endpoint  # type: ignore[attr-defined]
    return app


def routes(service: QueueService, counts: Counts, console: Sequence[BaseRoute]) -> list[BaseRoute]:
    """Starlette's routes: `/health`, `/metrics`, the console's page (and `/` for a
    browser) and its API (`console`); other paths are unknown operations. SQS calls
    never reach these (see `front`)."""

    async def metrics(request: Request) -> Response:
        try:
            return Response(await scrape(service, counts), media_type=CONTENT_TYPE)
        except StoreUnavailable as error:
            # Prometheus records a failed scrape (`up` 0): better than stale numbers.
            return PlainTextResponse(f"the store is unavailable: {error.reason}", 503)

    return [
        Route("/health", partial(_health, service), methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
        *dashboard.routes(),
        *console,
        Route("/", dashboard.page, methods=["GET"]),
        Route("/{rest:path}", _unknown_path, methods=_EVERY_METHOD),
    ]


def _head(scope: Scope) -> Head:
    path: str = scope["path"]
    client = scope.get("client")
    return Head(
        method=scope["method"],
        path=path,
        raw_path=scope.get("raw_path") or path.encode("utf-8"),
        query_string=scope["query_string"],
        headers=scope["headers"],
        client=client[0] if client else None,
        scheme=scope.get("scheme", "http"),
    )


async def _read_body(receive: Receive, headers: Mapping[str, str], limit: int) -> bytes:
    async def chunks() -> AsyncIterator[bytes]:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise Disconnected
            yield message.get("body", b"")
            if not message.get("more_body", False):
                return

    return await protocol.read_bounded(chunks(), headers.get("content-length"), limit)


def _departure(receive: Receive) -> Callable[[], Awaitable[None]]:
    """What returns once the client of a request whose body has been read goes away:
    from then on the server's `receive` has nothing to give but the disconnect."""

    async def gone() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    return gone


async def _send(send: Send, rendered: Rendered) -> None:
    headers = [
        (b"content-type", rendered.content_type.encode("latin-1")),
        (b"content-length", b"%d" % len(rendered.body)),
        *((k.encode("latin-1"), v.encode("latin-1")) for k, v in rendered.headers.items()),
    ]
    await send({"type": "http.response.start", "status": rendered.status, "headers": headers})
    await send({"type": "http.response.body", "body": rendered.body})


async def _health(service: QueueService, request: Request) -> Response:
    """200 while the store serves; 503 with the reason while it cannot (a load balancer
    then sends clients elsewhere, and an operator sees why)."""
    store = service.store
    reason = store.unavailable() if isinstance(store, ServingState) else None
    if reason is not None:
        return JSONResponse({"status": "unavailable", "reason": reason}, 503)
    return JSONResponse({"status": "ok"})


async def _unknown_path(request: Request, _exc: Exception | None = None) -> Response:
    error = errors.SqsError("UnknownOperationException", "An unknown operation was requested.")
    rendered = render_error(protocol.answer_format(request.headers), error, new_id())
    return Response(
        rendered.body, rendered.status, headers=rendered.headers, media_type=rendered.content_type
    )


def framework_errors() -> dict[Any, Callable[[Request, Exception], Awaitable[Response]]]:
    """Starlette's exception handlers: where the framework would answer a method or a
    path it has no route for (405, 404 in text/plain), SQS's answer to an unknown
    operation, in the protocol the request looks like."""
    return {404: _unknown_path, 405: _unknown_path}


