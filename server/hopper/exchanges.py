"""The direct path's work for each SQS call (hopper/direct.py), compiled.

direct.py's protocol subclasses uvicorn's, an interpreted class, which mypyc cannot
compile; what it does for each call is here instead, in plain functions and a class
of this module's own that the protocol calls: the call's `Exchange` (what uvicorn sees
as the request in progress) made from the parsed head, the checks before its body, the
body collected, and the answer's bytes. The protocol keeps what touches uvicorn's
state (the parser's callbacks, the transport, the pipeline, the timers).
"""

from __future__ import annotations

import asyncio
import http
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import httptools

from hopper.endpoint import Endpoint, Head, Incoming
from hopper.wire import protocol
from hopper.wire.errors import SqsError
from hopper.wire.render_json import Rendered

_STATUS = {
    status.value: b"HTTP/1.1 %d %s\r\n" % (status.value, status.phrase.encode())
    for status in http.HTTPStatus
}
# Headers whose meaning ProxyHeadersMiddleware applies (client address, scheme): such
# requests take the ASGI path, which runs it.
_PROXIED = frozenset({"x-forwarded-for", "x-forwarded-proto"})

# A wrapper's check: an ASGI scope (and the headers it holds, decoded) to its refusal.
Check = Callable[[dict[str, Any], Mapping[str, str]], Rendered | None]


class Departure:
    """The `message_event` uvicorn sets when the connection is lost: here it ends the
    long poll waiting on `gone` (see RequestContext.gone)."""

    def __init__(self) -> None:
        self._waiter: asyncio.Future[None] | None = None

    def set(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def wait(self) -> None:
        if self._waiter is None:
            self._waiter = asyncio.get_running_loop().create_future()
        await self._waiter


class Exchange:
    """One SQS call served directly; it stands in the protocol's `cycle` for uvicorn,
    which reads `response_complete`, sets `disconnected` and `keep_alive`, and calls
    `message_event.set()` when the connection is lost."""

    def __init__(
        self, endpoint: Endpoint, incoming: Incoming, path: str, keep_alive: bool
    ) -> None:
        self.endpoint = endpoint
        self.incoming = incoming
        self.path = path  # percent-decoded, as an ASGI scope's
        self.limit = endpoint.body_limit(incoming)
        self.body = bytearray()
        self.keep_alive = keep_alive
        self.disconnected = False
        self.response_complete = False
        self.message_event = Departure()

    async def gone(self) -> None:
        await self.message_event.wait()

    def refusal(self, checks: Sequence[Check], headers: Sequence[tuple[bytes, bytes]],
                ) -> Rendered | None:
        """The answer to a call refused once its head is in (a wrapper's check, a
        declared length beyond the limit), or None. `headers`: as the parser gave them."""
        incoming = self.incoming
        if checks:
            scope: dict[str, Any] = {
                "type": "http", "method": incoming.method, "scheme": incoming.scheme,
                "path": self.path, "query_string": incoming.query_string,
                "headers": headers,
            }
            for check in checks:
                refused = check(scope, incoming.headers)
                if refused is not None:
                    return refused
        try:
            protocol.read_declared(incoming.headers.get("content-length"), self.limit)
        except SqsError as error:
            return self.endpoint.refusal(incoming, error)
        return None

    def take(self, body: bytes) -> Rendered | None:
        """Collects a piece of the body; the refusal once it is longer than allowed."""
        self.body += body
        if len(self.body) > self.limit:
            return self.endpoint.refusal(self.incoming, protocol.body_too_large(self.limit))
        return None

    async def answer(self) -> Rendered:
        return await self.endpoint.answer(self.incoming, bytes(self.body), self.gone)


def exchange(
    endpoint: Endpoint, url: bytes, parser: Any, headers: Sequence[tuple[bytes, bytes]],
    client: tuple[str, int] | None, scheme: str | None,
) -> Exchange | None:
    """The SQS call whose head `parser` just parsed (`url`, `headers`), or None for a
    request that goes through ASGI (not an SQS call, or one behind a proxy's headers)."""
    parsed = httptools.parse_url(url)
    raw_path: bytes = parsed.path
    path = raw_path.decode("ascii")
    if "%" in path:
        path = urllib.parse.unquote(path)
    method: bytes = parser.get_method()
    head = Head(
        method=method.decode("ascii"),
        path=path,
        raw_path=raw_path,
        query_string=parsed.query or b"",
        headers=headers,
        client=client[0] if client else None,
        scheme=scheme or "http",
    )
    incoming = endpoint.incoming(head)
    if incoming is None or not _PROXIED.isdisjoint(incoming.headers):
        return None
    keep_alive = parser.get_http_version() != "1.0" and bool(parser.should_keep_alive())
    return Exchange(endpoint, incoming, path, keep_alive)


# The head's default lines (uvicorn's server and date headers), encoded once for each
# list uvicorn makes of them (a new one every second, for the date).
_defaults: list[tuple[list[tuple[bytes, bytes]] | None, bytes]] = [(None, b"")]


def _default_lines(defaults: list[tuple[bytes, bytes]]) -> bytes:
    made, lines = _defaults[0]
    if made is not defaults:
        lines = b"".join([b"%s: %s\r\n" % pair for pair in defaults])
        _defaults[0] = (defaults, lines)
    return lines


def encoded(rendered: Rendered, defaults: list[tuple[bytes, bytes]], keep_alive: bool) -> bytes:
    """The answer's bytes: status line, uvicorn's default headers, the answer's own."""
    head = [_STATUS[rendered.status], _default_lines(defaults)]
    head.append(b"content-type: %s\r\ncontent-length: %d\r\n" % (
        rendered.content_type.encode("latin-1"), len(rendered.body)))
    for key, text in rendered.headers.items():
        head.append(f"{key}: {text}\r\n".encode("latin-1"))
    if not keep_alive:
        head.append(b"connection: close\r\n")
    head.append(b"\r\n")
    head.append(rendered.body)
    return b"".join(head)
