"""The HTTP side: SQS requests -> decode -> action handler -> render, and the routes
of everything else (health, metrics, the dashboard).

SQS calls are served by `front`, a plain ASGI app in front of Starlette: they are the
hot path, and Starlette's middleware, routing and request/response objects cost about
as much CPU per call as the queue work of a send. Everything else goes to Starlette.

Every failure becomes an SQS error in the request's own protocol: an `SqsError` as it
is, a core `QueueError` through `errors.from_core`, anything else as InternalFailure
(logged with its traceback). A client never sees a framework error page from here.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

from hopper.auth.gate import Gate
from hopper.auth.sigv4 import Arrival
from hopper.core.errors import QueueError, StoreUnavailable
from hopper.core.ids import new_id
from hopper.core.model import QueueKey
from hopper.core.service import QueueService
from hopper.core.store import ServingState
from hopper.observability import dashboard, requests
from hopper.observability.metrics import CONTENT_TYPE, scrape
from hopper.observability.overview import Counts
from hopper.settings import Settings
from hopper.wire import (
    errors,
    protocol,
    queue_urls,
    regions,
    render_json,
    render_query_json,
    render_xml,
    validate,
)
from hopper.wire.context import RequestContext
from hopper.wire.render_json import Rendered
from hopper.wire.sns import endpoint as sns_endpoint
from hopper.wire.sns import errors as sns_errors
from hopper.wire.sns import render as sns_render
from hopper.wire.sns import routing
from hopper.wire.sns.parts import Sns

Handler = Callable[[QueueService, RequestContext, dict[str, Any]], Awaitable[dict[str, Any]]]
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
AsgiApp = Callable[[Scope, Receive, Send], Awaitable[None]]

log = logging.getLogger("hopper.http")

# The first path segments Starlette serves; any other `/` or `/<account>/<name>` is SQS.
_OWN_SEGMENTS = frozenset({"health", "metrics", "dashboard", "sns"})
_EVERY_METHOD = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE"]


# Not frozen, as Head and RequestContext: made for every request, and a frozen
# dataclass's __init__ sets each field through object.__setattr__ (0.86 us against 0.17
# for seven fields). Nothing changes them once made.
@dataclass(slots=True)
class Incoming:
    """An SQS request as the transport hands it over: header names lower-case (the
    first value of a repeated header in `headers`, every value in `raw_headers`)."""

    method: str
    scheme: str
    raw_path: str  # percent-encoded, as signed
    query_string: bytes
    headers: Mapping[str, str]
    parsed_headers: Sequence[tuple[bytes, bytes]]  # as the server parsed them
    client: str | None
    path_queue: QueueKey | None

    @property
    def raw_headers(self) -> list[tuple[str, str]]:
        # Decoded only for the signature's check, the one reader of every value.
        return [(k.decode("latin-1"), v.decode("latin-1")) for k, v in self.parsed_headers]


class Disconnected(Exception):
    """The client went away before its request body arrived: nobody to answer."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    """The SQS endpoint: which requests are SQS calls and their answers. Shared by the
    ASGI app (`front`) and the direct path (hopper/direct.py), which serves SQS calls
    from uvicorn's protocol without an ASGI cycle."""

    service: QueueService
    settings: Settings
    actions: Mapping[str, Handler]
    gate: Gate | None
    sns: Sns | None = None  # SNS calls share `/` with SQS's (wire/sns/routing.py)

    def incoming(self, request: Head) -> Incoming | None:
        """The SQS request `request` is, or None for one Starlette serves."""
        return _sqs_request(request, self.settings.region)

    def body_limit(self, incoming: Incoming) -> int:
        return protocol.body_limit(incoming.headers, self.settings.max_body_bytes)

    async def answer(
        self, incoming: Incoming, body: bytes, gone: Callable[[], Awaitable[None]] | None
    ) -> Rendered:
        """The answer to one SQS (or SNS) request whose body has been read: never an
        exception."""
        if self.sns is not None and routing.is_sns(incoming.headers, incoming.query_string, body):
            return await serve_sns(incoming, body, self.sns, self.settings, self.gate)
        return await serve(
            incoming, body, self.service, self.settings, self.actions, self.gate, gone
        )

    def refusal(self, incoming: Incoming, error: errors.SqsError) -> Rendered:
        """The answer to a request refused before its body was read (too long)."""
        return _render_error(protocol.answer_format(incoming.headers), error, new_id())


@dataclass(slots=True)
class Head:
    """A request's head as the HTTP server parsed it: header names lower-case bytes."""

    method: str
    path: str  # percent-decoded
    raw_path: bytes  # as sent
    query_string: bytes
    headers: Sequence[tuple[bytes, bytes]]
    client: str | None
    scheme: str


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


def _sqs_request(head: Head, home: str) -> Incoming | None:
    """The SQS request `head` is, or None for one Starlette serves: another path or
    method, or a browser asking `/` for the dashboard. `home` is the server's region."""
    method = head.method
    if method not in ("GET", "POST"):
        return None
    path = head.path
    if path == "/":
        path_queue = None
    else:
        segments = path[1:].split("/")
        if segments[0] in _OWN_SEGMENTS:
            return None
        path_queue = queue_urls.path_queue(segments, home)
        if path_queue is None:
            return None
    # The first value of a repeated header: filled backwards, an earlier one wins.
    headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in reversed(head.headers)}
    query_string = head.query_string
    if (
        path_queue is None
        and method == "GET"
        and dashboard.wants_page(method, query_string, headers.get("accept", ""))
    ):
        return None
    return Incoming(
        method=method,
        scheme=head.scheme,
        raw_path=head.raw_path.decode("latin-1"),
        query_string=query_string,
        headers=headers,
        parsed_headers=head.headers,
        client=head.client,
        path_queue=path_queue,
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
    rendered = _render_error(protocol.answer_format(request.headers), error, new_id())
    return Response(
        rendered.body, rendered.status, headers=rendered.headers, media_type=rendered.content_type
    )


def framework_errors() -> dict[Any, Callable[[Request, Exception], Awaitable[Response]]]:
    """Starlette's exception handlers: where the framework would answer a method or a
    path it has no route for (405, 404 in text/plain), SQS's answer to an unknown
    operation, in the protocol the request looks like."""
    return {404: _unknown_path, 405: _unknown_path}


async def serve(
    incoming: Incoming,
    body: bytes,
    service: QueueService,
    settings: Settings,
    actions: Mapping[str, Handler],
    gate: Gate | None,
    gone: Callable[[], Awaitable[None]] | None = None,
) -> Rendered:
    """The answer to one SQS request, whatever happens: never an exception. `gone`
    returns once the client has gone away (see RequestContext)."""
    ctx = _context(incoming, settings, gone)
    form = protocol.answer_format(incoming.headers)
    started = time.perf_counter()
    call = requests.Call(ctx.request_id)
    try:
        result = await _dispatch(incoming, body, ctx, service, actions, gate, call)
        rendered = _render_result(form, call.action, result, ctx.request_id)
    except errors.SqsError as error:
        rendered = _render_error(form, error, ctx.request_id)
        call.outcome = error.name
    except QueueError as error:
        sqs_error = errors.from_core(error)
        rendered = _render_error(form, sqs_error, ctx.request_id)
        call.outcome = sqs_error.name
    except Exception:
        log.exception("hopper: request %s failed", ctx.request_id)
        rendered = _render_error(form, errors.internal_failure(), ctx.request_id)
        call.outcome = "InternalFailure"
    else:
        rendered.headers.update(ctx.response_headers)
    requests.finished(call, rendered.status, time.perf_counter() - started)
    return rendered


async def _dispatch(
    incoming: Incoming,
    body: bytes,
    ctx: RequestContext,
    service: QueueService,
    actions: Mapping[str, Handler],
    gate: Gate | None,
    call: requests.Call,
) -> dict[str, Any]:
    if gate is not None:
        # The signature covers the body, so the gate needs it whole.
        account = gate.admit(_arrival(incoming, body), incoming.client)
        ctx = dataclasses.replace(ctx, account=account)
    if ctx.protocol == "json":
        action, params = protocol.decode_json(incoming.headers.get("x-amz-target"), body)
    else:
        action, params = protocol.decode_query(
            incoming.method, incoming.query_string, body,
            on_queue_path=ctx.path_queue is not None,
        )
        protocol.check_endpoint(action, ctx.path_queue)
    handler = actions.get(action)
    if handler is None:
        raise protocol.unknown_action(action)
    call.action = action
    validate.check_request(params)
    return await handler(service, ctx, params)


async def serve_sns(
    incoming: Incoming, body: bytes, sns: Sns, settings: Settings, gate: Gate | None
) -> Rendered:
    """The answer to one SNS request (wire/sns/endpoint.py), after the same gate."""
    region = routing.region(incoming.headers, incoming.query_string, settings.region)
    ctx = dataclasses.replace(_context(incoming, settings, None), region=region)
    started = time.perf_counter()
    call = requests.Call(ctx.request_id)
    try:
        if gate is not None:
            account = gate.admit(_arrival(incoming, body), incoming.client)
            ctx = dataclasses.replace(ctx, account=account)
    except errors.SqsError as error:
        rendered = sns_render.failure(sns_errors.from_sqs(error), ctx.request_id)
        call.outcome = error.name
    else:
        action, failed, rendered = await sns_endpoint.serve(
            sns, ctx, incoming.method, incoming.query_string, body
        )
        call.action = action or call.action
        call.outcome = failed or call.outcome
    requests.finished(call, rendered.status, time.perf_counter() - started)
    return rendered


def _context(
    incoming: Incoming, settings: Settings, gone: Callable[[], Awaitable[None]] | None
) -> RequestContext:
    host = incoming.headers.get("host") or f"{settings.host}:{settings.port}"
    region = regions.request_region(incoming.headers, incoming.query_string, settings.region)
    return RequestContext(
        protocol=protocol.detect_protocol(incoming.headers),
        account=settings.account_id,
        region=region,
        home_region=settings.region,
        base_url=f"{incoming.scheme}://{host}",
        path_queue=incoming.path_queue,
        trace_header=incoming.headers.get("x-amzn-trace-id"),
        request_id=new_id(),
        gone=gone,
    )


def _arrival(incoming: Incoming, body: bytes) -> Arrival:
    # The bytes as sent: a signature is over the percent-encoded path and query.
    return Arrival(
        method=incoming.method,
        path=incoming.raw_path,
        query=incoming.query_string.decode("latin-1"),
        headers=incoming.raw_headers,
        body=body,
    )


def _render_result(form: str, action: str, result: dict[str, Any], request_id: str) -> Rendered:
    if form == "json":
        return render_json.render_result(result, request_id)
    if form == "query-json":
        return render_query_json.render_result(action, result, request_id)
    return render_xml.render_result(action, result, request_id)


def _render_error(form: str, error: errors.SqsError, request_id: str) -> Rendered:
    """`form` is protocol.answer_format's: "json", "query-json" or "xml"."""
    if form == "json":
        return render_json.render_error(error, request_id)
    if form == "query-json":
        return render_query_json.render_error(error, request_id)
    return render_xml.render_error(error, request_id)

