"""The built-in dashboard: GET /dashboard (or GET / from a browser), its two JSON
feeds, and its static files, served from the package (no build step).

Read-only: the queue list is overview.py's, the dead-letter view is QueueService.peek,
which changes no receive count, lease or visibility. Everything the page shows is put
in place as text (never as markup), so a message body cannot run script in it.
"""

from __future__ import annotations

import base64
from importlib import resources
from typing import Any
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from hopper.core import characters
from hopper.core.errors import InvalidParameter, QueueNotFound, StoreUnavailable
from hopper.core.model import MessageAttribute, PeekedMessage, QueueKey
from hopper.core.service import MAX_PEEK, QueueService
from hopper.observability.overview import Counts, QueueView, overview

PEEK_DEFAULT = 10
PEEK_REFUSED = (
    "peek is off while hopper authenticates SQS requests (--auth sigv4): the dashboard"
    " is not authenticated, and message bodies are the tenants' own"
)


def routes(service: QueueService, counts: Counts, *, peek_allowed: bool) -> list[BaseRoute]:
    """The dashboard's routes. Without `peek_allowed` (a server that authenticates SQS
    requests: the dashboard itself is not authenticated) no message body is shown."""

    async def queues(request: Request) -> Response:
        try:
            views = await overview(service, counts)
        except StoreUnavailable as error:
            return _problem(503, f"the store is unavailable: {error.reason}")
        return JSONResponse(
            {"time": service.clock.time(), "queues": [_queue_json(view) for view in views]}
        )

    async def peek(request: Request) -> Response:
        if not peek_allowed:
            return _problem(403, PEEK_REFUSED)
        return await _peek(service, request)

    return [
        Route("/dashboard", page, methods=["GET"]),
        Route("/dashboard/queues", queues, methods=["GET"]),
        Route("/dashboard/peek", peek, methods=["GET"]),
        Mount("/dashboard/static", StaticFiles(packages=[("hopper", "static")])),
    ]


def wants_page(method: str, query_string: bytes, accept: str) -> bool:
    """A browser asking for `/`: a GET that accepts HTML and names no SQS action.
    SDKs never send such a request (query GETs always carry Action=)."""
    return (
        method == "GET"
        and "text/html" in accept
        and all(name != "Action" for name, _ in parse_qsl(query_string.decode("latin-1")))
    )


async def page(request: Request) -> Response:
    html = resources.files("hopper").joinpath("static/dashboard.html").read_text("utf-8")
    return HTMLResponse(html, headers={"cache-control": "no-store"})


async def _peek(service: QueueService, request: Request) -> Response:
    params = request.query_params
    account, name = params.get("account"), params.get("queue")
    if not account or not name:
        return _problem(400, "account and queue are required")
    if not (characters.allowed(account) and characters.allowed(name)):
        # No queue has such a name, and a store must not see it (PostgreSQL refuses NUL).
        return _problem(400, "account and queue must be printable text")
    try:
        limit = int(params.get("limit", PEEK_DEFAULT))
        peeked = await service.peek(QueueKey(account, name), limit=limit)
    except ValueError:
        return _problem(400, "limit must be a whole number")
    except InvalidParameter:
        return _problem(400, f"limit must be 1 to {MAX_PEEK}")
    except QueueNotFound:
        return _problem(404, f"no queue {name} in account {account}")
    except StoreUnavailable as error:
        return _problem(503, f"the store is unavailable: {error.reason}")
    return JSONResponse({"messages": [_message_json(p) for p in peeked]})


def _problem(status: int, text: str) -> Response:
    return JSONResponse({"error": text}, status_code=status)


def _queue_json(view: QueueView) -> dict[str, Any]:
    rule = view.record.config.dead_letter
    return {
        "account": view.key.account,
        "name": view.key.name,
        "fifo": view.record.config.fifo,
        "visible": view.stats.visible,
        "in_flight": view.stats.in_flight,
        "delayed": view.stats.delayed,
        "depth": view.depth,
        "oldest_age": view.oldest_age,
        "oldest_visible_age": view.oldest_visible_age,
        "redelivered": view.stats.redelivered,
        "dead_letter_target": None if rule is None else rule.target.name,
        "max_receive_count": None if rule is None else rule.max_receive_count,
        "dead_letter_depth": view.dead_letter_depth,
        "dead_letter_sources": [source.name for source in view.sources],
    }


def _message_json(peeked: PeekedMessage) -> dict[str, Any]:
    message = peeked.message
    source = message.dead_letter_source
    return {
        "id": message.id,
        "body": message.body,
        "sent_at": message.sent_at,
        "receive_count": peeked.receive_count,
        "first_received_at": peeked.first_received_at,
        "visible_at": peeked.visible_at,
        "group_id": message.group_id,
        "dead_letter_source": None if source is None else source.name,
        "attributes": {
            name: _attribute_text(value) for name, value in message.attributes.items()
        },
    }


def _attribute_text(attribute: MessageAttribute) -> str:
    if attribute.binary_value is not None:
        return "base64:" + base64.b64encode(attribute.binary_value).decode("ascii")
    return attribute.string_value or ""
