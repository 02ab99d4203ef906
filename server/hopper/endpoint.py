"""The SQS endpoint: which HTTP requests are SQS (or SNS) calls, and their answers,
from a request's parsed head and read body to the bytes' `Rendered`.

Shared by the two ways hopper serves a call: the ASGI app (hopper/http.py, `front`)
and the direct path (hopper/direct.py), which answers from uvicorn's protocol itself.
It knows nothing of either server: it is the per-call work of both, kept out of
http.py (Starlette's routes, an async generator) and direct.py (a subclass of
uvicorn's protocol) so that it can run compiled (pyproject.toml's `[tool.hopper]
compiled`; bench/README.md, "The request path compiled").

Every failure becomes an SQS error in the request's own protocol: an `SqsError` as it
is, a core `QueueError` through `errors.from_core`, anything else as InternalFailure
(logged with its traceback). A client never sees a framework error page from here.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hopper.auth.gate import Gate
from hopper.auth.sigv4 import Arrival
from hopper.core.errors import QueueError
from hopper.core.ids import new_id
from hopper.core.model import QueueKey
from hopper.core.service import QueueService
from hopper.observability import dashboard, requests
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

log = logging.getLogger("hopper.http")

# The first path segments Starlette serves; any other `/` or `/<account>/<name>` is SQS.
_OWN_SEGMENTS = frozenset({"health", "metrics", "dashboard", "sns"})

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
        return render_error(protocol.answer_format(incoming.headers), error, new_id())


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
        rendered = render_error(form, error, ctx.request_id)
        call.outcome = error.name
    except QueueError as error:
        sqs_error = errors.from_core(error)
        rendered = render_error(form, sqs_error, ctx.request_id)
        call.outcome = sqs_error.name
    except Exception:
        log.exception("hopper: request %s failed", ctx.request_id)
        rendered = render_error(form, errors.internal_failure(), ctx.request_id)
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


def render_error(form: str, error: errors.SqsError, request_id: str) -> Rendered:
    """`form` is protocol.answer_format's: "json", "query-json" or "xml"."""
    if form == "json":
        return render_json.render_error(error, request_id)
    if form == "query-json":
        return render_query_json.render_error(error, request_id)
    return render_xml.render_error(error, request_id)

