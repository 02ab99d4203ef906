"""The console's JSON API, under /dashboard/api/. Every action goes through the queue
core (QueueService and core/operators.py), so it follows the rules an SQS request
does: validation, FIFO rules, the 60-second purge rule, move tasks' rules. Reads never
change a message (QueueStore.peek).

    GET    session                         who is signed in (401: nobody, with auth on)
    POST   session                         {access_key, secret_key} -> a session token
    GET    queues                          the caller's queues with their counts
    GET    queues/{account}/{name}         one queue: counts, attributes, dead-letter
                                           relations, move tasks, history
    GET    queues/{account}/{name}/messages            the message browser
    POST   queues/{account}/{name}/messages            send {body, attributes,
                                                       group_id, deduplication_id}
    DELETE queues/{account}/{name}/messages/{id}       delete that one message
    POST   queues/{account}/{name}/purge
    POST   queues/{account}/{name}/redrive             {destination, max_per_second}
    POST   queues/{account}/{name}/redrive/{task}/cancel
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from hopper.console import render, sessions
from hopper.console.answers import (
    Caller,
    Problem,
    answering,
    caller,
    json_body,
    queue_key,
    text_field,
    whole_field,
)
from hopper.console.history import History
from hopper.core import characters, operators
from hopper.core.model import MessageDraft, QueueKey
from hopper.core.service import QueueService
from hopper.observability.overview import Counts, QueueView, overview, queue_view
from hopper.wire import validate
from hopper.wire.context import RequestContext
from hopper.wire.queue_attributes import check_queue_attribute_names, queue_attributes
from hopper.wire.regions import split_account

PREFIX = "/dashboard/api"
_QUEUE = PREFIX + "/queues/{account}/{name}"


class Console:
    """The API over one server's queue core. `signed`: the sessions of `--auth sigv4`
    (None: auth off, every account visible); `home`: the server's region."""

    def __init__(
        self, service: QueueService, counts: Counts, history: History, *,
        signed: sessions.Sessions | None, home: str,
    ) -> None:
        self.service, self.counts, self.history = service, counts, history
        self.signed, self.home = signed, home

    def routes(self) -> list[BaseRoute]:
        def route(path: str, handler: Any, method: str) -> Route:
            return Route(PREFIX + path, answering(handler), methods=[method])

        return [
            route("/session", self.who, "GET"),
            route("/session", self.sign_in, "POST"),
            route("/queues", self.queues, "GET"),
            route("/queues/{account}/{name}", self.queue, "GET"),
            route("/queues/{account}/{name}/messages", self.messages, "GET"),
            route("/queues/{account}/{name}/messages", self.send, "POST"),
            route("/queues/{account}/{name}/messages/{message_id}", self.discard, "DELETE"),
            route("/queues/{account}/{name}/purge", self.purge, "POST"),
            route("/queues/{account}/{name}/redrive", self.redrive, "POST"),
            route("/queues/{account}/{name}/redrive/{task_id}/cancel", self.cancel, "POST"),
        ]

    # --- who -----------------------------------------------------------------------------

    async def who(self, request: Request) -> Response:
        who = caller(request, self.signed)
        auth = "off" if self.signed is None else "sigv4"
        return JSONResponse({"auth": auth, "account": who.account})

    async def sign_in(self, request: Request) -> Response:
        if self.signed is None:
            raise Problem(400, "hopper runs without --auth sigv4: there is nothing to sign in to")
        document = await json_body(request)
        access_key = text_field(document, "access_key") or ""
        secret_key = text_field(document, "secret_key") or ""
        credential = sessions.sign_in(self.signed.keys, access_key, secret_key)
        if credential is None:
            raise Problem(401, "unknown access key, or not its secret", "InvalidClientTokenId")
        token, expires = sessions.issue(credential, time.time())
        return JSONResponse(
            {"token": token, "account": credential.account_id, "expires_at": expires}
        )

    # --- reading -----------------------------------------------------------------------

    async def queues(self, request: Request) -> Response:
        who = caller(request, self.signed)
        views = await overview(self.service, self.counts, keep=self._keep(who))
        return JSONResponse({
            "time": self.service.clock.time(),
            "queues": [render.queue_json(view) for view in views],
        })

    async def queue(self, request: Request) -> Response:
        who = caller(request, self.signed)
        key = queue_key(request, who, self.home)
        view = await self._view(key)
        self.history.depth(key, view.depth)
        tasks = (
            await self.service.list_move_tasks(key, 10) if view.sources else []
        )
        return JSONResponse({
            "queue": render.queue_json(view),
            "attributes": self._attributes(request, view),
            "tasks": [render.task_json(task) for task in tasks],
            "history": {"interval": self.history.interval, "points": self.history.points(key)},
        })

    async def messages(self, request: Request) -> Response:
        key = queue_key(request, caller(request, self.signed), self.home)
        peeked = await operators.browse(self.service, key)
        now = self.service.clock.time()
        return JSONResponse({"messages": [render.message_json(p, now) for p in peeked]})

    # --- actions -----------------------------------------------------------------------

    async def send(self, request: Request) -> Response:
        key = queue_key(request, caller(request, self.signed), self.home)
        document = await json_body(request)
        draft = MessageDraft(
            body=text_field(document, "body") or "",
            # SQS's JSON shape, decoded as a JSON-protocol SendMessage's is.
            attributes=validate.message_attributes(document.get("attributes")),
            delay=_delay(document),
            group_id=text_field(document, "group_id"),
            deduplication_id=text_field(document, "deduplication_id"),
        )
        result = await self.service.send(key, draft)
        return JSONResponse({
            "message_id": result.message_id,
            "duplicate": result.duplicate,
            "sequence_number": result.sequence_number,
        })

    async def discard(self, request: Request) -> Response:
        key = queue_key(request, caller(request, self.signed), self.home)
        message_id = request.path_params["message_id"]
        if not characters.allowed(message_id):
            raise Problem(400, "a message id is printable text", "InvalidParameterValue")
        if not await operators.discard(self.service, key, message_id):
            raise Problem(404, f"no message {message_id} in {key.name}", "MessageNotFound")
        return JSONResponse({"deleted": message_id})

    async def purge(self, request: Request) -> Response:
        key = queue_key(request, caller(request, self.signed), self.home)
        await self.service.purge(key)
        return JSONResponse({"purged": key.name})

    async def redrive(self, request: Request) -> Response:
        key = queue_key(request, caller(request, self.signed), self.home)
        document = await json_body(request)
        name = text_field(document, "destination")
        if name is not None and not characters.allowed(name):
            raise Problem(400, "destination must be printable text", "InvalidParameterValue")
        # A named destination is a queue of the source's own account and region.
        destination = None if name is None else QueueKey(key.account, name)
        rate = whole_field(document, "max_per_second")
        task = await self.service.start_move_task(key, destination, rate)
        return JSONResponse({"task": render.task_json(task)})

    async def cancel(self, request: Request) -> Response:
        key = queue_key(request, caller(request, self.signed), self.home)
        task_id = request.path_params["task_id"]
        if not characters.allowed(task_id):
            raise Problem(400, "a task id is printable text", "InvalidParameterValue")
        task = await self.service.cancel_move_task(task_id, key)
        return JSONResponse({"task": render.task_json(task)})

    # --- helpers ---------------------------------------------------------------------------

    def _keep(self, who: Caller) -> Callable[[str], bool] | None:
        """Which store accounts the caller's list reads (None: all of them)."""
        if who.account is None:
            return None
        return lambda account: split_account(account, self.home)[0] == who.account

    async def _view(self, key: QueueKey) -> QueueView:
        return await queue_view(self.service, self.counts, key)

    def _attributes(self, request: Request, view: QueueView) -> dict[str, str]:
        account, region = split_account(view.key.account, self.home)
        ctx = RequestContext(
            protocol="json", account=account, region=region, home_region=self.home,
            base_url=f"{request.url.scheme}://{request.url.netloc}", path_queue=None,
            trace_header=None, request_id="console",
        )
        names = check_queue_attribute_names(["All"])
        return queue_attributes(ctx, view.record, view.stats, names)


def _delay(document: Mapping[str, Any]) -> float | None:
    delay = whole_field(document, "delay_seconds")
    return None if delay is None else float(delay)
