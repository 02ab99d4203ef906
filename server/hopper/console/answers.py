"""How the console's JSON API reads requests and answers: who is calling, which queue
a path names, bounded JSON bodies, and every refusal as a 4xx JSON `{"error", "code"}`
(a store that is down: 503), never a 500."""

from __future__ import annotations

import functools
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from hopper.console import sessions
from hopper.core import characters
from hopper.core.errors import QueueError, QueueNotFound, StoreUnavailable
from hopper.core.model import QueueKey
from hopper.wire import errors
from hopper.wire.regions import split_account

# A console request is one message and its attributes at most: SQS's 1 MiB, escaped.
MAX_BODY_BYTES = 8 * 1024 * 1024


class Problem(Exception):
    def __init__(self, status: int, text: str, code: str | None = None) -> None:
        super().__init__(text)
        self.status, self.text, self.code = status, text, code


def problem(status: int, text: str, code: str | None = None) -> Response:
    return JSONResponse({"error": text, "code": code}, status_code=status)


Handler = Callable[[Request], Awaitable[Response]]

# Every console request but a read must carry this header: a cross-site form cannot set
# it, and a cross-site fetch only after a preflight that hopper never grants. So with
# auth off a page elsewhere cannot purge, send or delete through the console even in a
# browser that sends no Origin (hopper.browsers refuses those that do).
CONSOLE_HEADER = "x-hopper-console"


def answering(handler: Handler) -> Handler:
    """`handler` with its refusals answered as JSON: Problem as it says, SQS errors and
    core errors with SQS's name and status (the one table in wire/errors.py)."""

    @functools.wraps(handler)
    async def answer(request: Request) -> Response:
        try:
            return await handler(request)
        except Problem as error:
            return problem(error.status, error.text, error.code)
        except StoreUnavailable as error:
            return problem(503, f"the store is unavailable: {error.reason}", "ServiceUnavailable")
        except QueueNotFound as error:
            # SQS answers 400; a JSON API over paths answers a missing resource 404.
            return problem(404, errors.from_core(error).message, "QueueDoesNotExist")
        except QueueError as error:
            return _sqs_problem(errors.from_core(error))
        except errors.SqsError as error:
            return _sqs_problem(error)

    return answer


def _sqs_problem(error: errors.SqsError) -> Response:
    status = error.code.status
    # A 5xx here would be hopper's fault; the core raises those only for a store down.
    return problem(status if status < 500 else 503, error.message, error.name)


@dataclass(frozen=True)
class Caller:
    """Who a console request acts for: one account (`--auth sigv4`), or, with auth off,
    every account (None), as the unauthenticated SQS endpoint does."""

    account: str | None

    def sees(self, key: QueueKey, home: str) -> bool:
        return self.account is None or split_account(key.account, home)[0] == self.account


def caller(request: Request, signed: sessions.Sessions | None) -> Caller:
    """The caller of `request`; raises Problem 401 when auth is on and the request
    carries no valid session token, 403 for an action without CONSOLE_HEADER."""
    who = _signed_in(request, signed)
    if request.method != "GET" and CONSOLE_HEADER not in request.headers:
        raise Problem(403, f"a console action needs the {CONSOLE_HEADER} header",
                      "AccessDenied")
    return who


def _signed_in(request: Request, signed: sessions.Sessions | None) -> Caller:
    if signed is None:
        return Caller(None)
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    credential = (
        sessions.verify(signed, token.strip(), time.time()) if scheme.lower() == "bearer" else None
    )
    if credential is None:
        raise Problem(401, "sign in with an access key and its secret", "NotSignedIn")
    return Caller(credential.account_id)


def queue_key(request: Request, who: Caller, home: str) -> QueueKey:
    """The queue a path names. One the caller may not see is answered as one that does
    not exist: another tenant's queue names are no business of the caller."""
    account, name = request.path_params["account"], request.path_params["name"]
    if not (characters.allowed(account) and characters.allowed(name)):
        raise Problem(400, "account and queue must be printable text", "InvalidParameterValue")
    key = QueueKey(account, name)
    if not who.sees(key, home):
        raise QueueNotFound(key)  # answered exactly as a queue that does not exist
    return key


async def json_body(request: Request) -> Mapping[str, Any]:
    """The request's JSON object, read at most MAX_BODY_BYTES. Raises Problem 400/413."""
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise Problem(413, f"a console request is at most {MAX_BODY_BYTES} bytes")
        chunks.append(chunk)
    raw = b"".join(chunks)
    try:
        document = orjson.loads(raw) if raw else {}
    except orjson.JSONDecodeError:
        raise Problem(400, "the body must be a JSON object", "MalformedJson") from None
    if not isinstance(document, dict):
        raise Problem(400, "the body must be a JSON object", "MalformedJson")
    return document


def text_field(document: Mapping[str, Any], name: str) -> str | None:
    """A text member, None when absent or empty."""
    value = document.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise Problem(400, f"{name} must be text", "InvalidParameterValue")
    return value or None


def whole_field(document: Mapping[str, Any], name: str) -> int | None:
    value = document.get(name)
    if value is None or value == "":
        return None
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 9:
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 10**9:
        return value
    raise Problem(400, f"{name} must be a whole number", "InvalidParameterValue")
