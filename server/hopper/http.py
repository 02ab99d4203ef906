"""The Starlette endpoints: request -> decode -> action handler -> render.

Every failure becomes an SQS error in the request's own protocol: an `SqsError` as it
is, a core `QueueError` through `errors.from_core`, anything else as InternalFailure
(logged with its traceback). A client never sees a framework error page from here.
"""

from __future__ import annotations

import dataclasses
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

from hopper.auth.gate import Gate
from hopper.auth.sigv4 import Arrival
from hopper.core.errors import QueueError, StoreUnavailable
from hopper.core.model import QueueKey
from hopper.core.service import QueueService
from hopper.observability import dashboard, requests
from hopper.observability.metrics import CONTENT_TYPE, scrape
from hopper.observability.overview import Counts
from hopper.settings import Settings
from hopper.wire import errors, protocol, render_json, render_xml
from hopper.wire.context import RequestContext
from hopper.wire.render_json import Rendered

Handler = Callable[[QueueService, RequestContext, dict[str, Any]], Awaitable[dict[str, Any]]]

log = logging.getLogger("hopper.http")


def routes(
    service: QueueService,
    settings: Settings,
    actions: Mapping[str, Handler],
    gate: Gate | None = None,
) -> list[BaseRoute]:
    """The server's routes: the service endpoint `/`, queue URLs `/<account>/<name>`
    (both protocols, GET and POST) and `/health`. Other paths are unknown operations.
    `gate` (authentication, rate limits) admits each SQS request; None admits all."""

    async def sqs(request: Request) -> Response:
        return await _serve(request, service, settings, actions, gate)

    async def root(request: Request) -> Response:
        if dashboard.wants_page(request):
            return await dashboard.page(request)
        return await sqs(request)

    counts = Counts(service)

    async def metrics(request: Request) -> Response:
        try:
            return Response(await scrape(service, counts), media_type=CONTENT_TYPE)
        except StoreUnavailable as error:
            # Prometheus records a failed scrape (`up` 0): better than stale numbers.
            return PlainTextResponse(f"the store is unavailable: {error.reason}", 503)

    return [
        Route("/health", _health, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
        *dashboard.routes(service, counts, peek_allowed=settings.auth == "off"),
        Route("/", root, methods=["GET", "POST"]),
        Route("/{account}/{name}", sqs, methods=["GET", "POST"]),
        Route("/{rest:path}", _unknown_path),
    ]


async def _health(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


async def _unknown_path(request: Request) -> Response:
    error = errors.SqsError("UnknownOperationException", "An unknown operation was requested.")
    return _response(_render_error(protocol.detect_protocol(request.headers), error, _new_id()))


async def _serve(
    request: Request,
    service: QueueService,
    settings: Settings,
    actions: Mapping[str, Handler],
    gate: Gate | None,
) -> Response:
    ctx = _context(request, settings)
    started = time.perf_counter()
    call = requests.Call(ctx.request_id)
    try:
        result = await _dispatch(request, ctx, service, settings, actions, gate, call)
    except errors.SqsError as error:
        rendered = _render_error(ctx.protocol, error, ctx.request_id)
        call.outcome = error.name
    except QueueError as error:
        sqs_error = errors.from_core(error)
        rendered = _render_error(ctx.protocol, sqs_error, ctx.request_id)
        call.outcome = sqs_error.name
    except Exception:
        log.exception("hopper: request %s failed", ctx.request_id)
        rendered = _render_error(ctx.protocol, errors.internal_failure(), ctx.request_id)
        call.outcome = "InternalFailure"
    else:
        rendered = _render_result(ctx.protocol, call.action, result, ctx.request_id)
        rendered.headers.update(ctx.response_headers)
    requests.finished(call, rendered.status, time.perf_counter() - started)
    return _response(rendered)


async def _dispatch(
    request: Request,
    ctx: RequestContext,
    service: QueueService,
    settings: Settings,
    actions: Mapping[str, Handler],
    gate: Gate | None,
    call: requests.Call,
) -> dict[str, Any]:
    body = await protocol.read_bounded(
        request.stream(), request.headers.get("content-length"), settings.max_body_bytes
    )
    if gate is not None:
        # The signature covers the body, so the gate needs it whole.
        client = request.client.host if request.client else None
        ctx = dataclasses.replace(ctx, account=gate.admit(_arrival(request, body), client))
    if ctx.protocol == "json":
        action, params = protocol.decode_json(request.headers.get("x-amz-target"), body)
    else:
        action, params = protocol.decode_query(
            request.method, request.scope["query_string"], body,
            on_queue_path=ctx.path_queue is not None,
        )
        protocol.check_endpoint(action, ctx.path_queue)
    handler = actions.get(action)
    if handler is None:
        raise protocol.unknown_action(action)
    call.action = action
    return await handler(service, ctx, params)


def _context(request: Request, settings: Settings) -> RequestContext:
    params = request.path_params
    path_queue = QueueKey(params["account"], params["name"]) if "name" in params else None
    host = request.headers.get("host") or f"{settings.host}:{settings.port}"
    return RequestContext(
        protocol=protocol.detect_protocol(request.headers),
        account=settings.account_id,
        region=settings.region,
        base_url=f"{request.url.scheme}://{host}",
        path_queue=path_queue,
        trace_header=request.headers.get("x-amzn-trace-id"),
        request_id=_new_id(),
    )


def _arrival(request: Request, body: bytes) -> Arrival:
    # The bytes as sent: a signature is over the percent-encoded path and query.
    raw_path = request.scope.get("raw_path") or request.scope["path"].encode("utf-8")
    return Arrival(
        method=request.method,
        path=raw_path.decode("latin-1"),
        query=request.scope["query_string"].decode("latin-1"),
        headers=[(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.raw],
        body=body,
    )


def _render_result(kind: str, action: str, result: dict[str, Any], request_id: str) -> Rendered:
    if kind == "json":
        return render_json.render_result(result, request_id)
    return render_xml.render_result(action, result, request_id)


def _render_error(kind: str, error: errors.SqsError, request_id: str) -> Rendered:
    if kind == "json":
        return render_json.render_error(error, request_id)
    return render_xml.render_error(error, request_id)


def _response(rendered: Rendered) -> Response:
    return Response(
        rendered.body, rendered.status, headers=rendered.headers, media_type=rendered.content_type
    )


def _new_id() -> str:
    return str(uuid.uuid4())
