"""Limits on HTTP connections, below the ASGI app: a deadline for each request to
arrive, and a cap on connections open at once.

uvicorn closes a keep-alive connection idle for `timeout_keep_alive` seconds, but only
after a first answer, and any byte received disarms it: a socket that never sends a
request, or sends one header byte a second, was held forever, and about a thousand
of them used up the process's open files. Here every connection must deliver a whole
request (headers and body) within `idle_timeout` seconds of opening or of its
previous answer, else it is closed. The deadline stops once the request is in: a long
poll, quiet for up to 20 seconds while it waits, is the app's time, never cut.

Beyond `max_connections` open connections a new one is answered 503 and closed at
once (SDKs retry a 503 with back-off), before it costs more than its socket. One client
address may hold at most its share of them (`max_connections_per_address`, half the
cap unless set): a single client holding every connection, idle ones reopened as they
are closed or real long polls, otherwise made every other client get 503.

A request's head (request line and headers) may be at most MAX_HEAD_BYTES long: the
parser buffers a header until it ends, so one endless header would otherwise grow
without bound for as long as the deadline allows. A request the HTTP parser cannot
read (`POST *`, a broken request line, an endless head) gets an SQS
SerializationException in the protocol its headers point to, not uvicorn's text/plain.
"""

from __future__ import annotations

import asyncio
import logging
import resource
from dataclasses import dataclass

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from hopper.core.ids import new_id
from hopper.settings import Settings, load
from hopper.wire import protocol, render_json, render_xml
from hopper.wire.errors import SqsError

log = logging.getLogger("hopper.connection_limits")

# Open files kept for everything but client sockets: the database pool, the LISTEN
# connection, log files, the listening socket itself.
RESERVED_FILES = 100
# With no open-files limit to speak of, the cap still keeps memory bounded.
MAX_DEFAULT_CONNECTIONS = 10_000
# SDK requests carry a few KiB of headers; h11 refuses heads beyond 16 KiB.
MAX_HEAD_BYTES = 64 * 1024


@dataclass(frozen=True)
class Limits:
    idle_timeout: float
    max_connections: int
    per_address: int


_limits: Limits | None = None
# Connections open per client address, in this process.
_by_address: dict[str, int] = {}


def configure(settings: Settings) -> Limits:
    """This process's limits, from `settings` (or from the environment, in a worker
    process of `--workers N`, which learns its settings from `HOPPER_*` variables)."""
    global _limits
    cap = settings.max_connections or default_cap()
    share = settings.max_connections_per_address or max(1, cap // 2)
    _limits = Limits(settings.idle_timeout, cap, min(share, cap))
    return _limits


def default_cap() -> int:
    """The open-files limit less RESERVED_FILES (at most MAX_DEFAULT_CONNECTIONS)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_DEFAULT_CONNECTIONS
    return max(1, min(soft - RESERVED_FILES, MAX_DEFAULT_CONNECTIONS))


def _refusal(reason: str) -> bytes:
    text = f"hopper: {reason}; try again later.".encode()
    return b"".join([
        b"HTTP/1.1 503 Service Unavailable\r\n",
        b"content-type: text/plain; charset=utf-8\r\n",
        b"content-length: %d\r\n" % len(text),
        b"retry-after: 1\r\n",
        b"connection: close\r\n\r\n",
        text,
    ])


class GuardedProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the request deadline and the connection cap."""

    deadline: asyncio.TimerHandle | None = None  # the timer (see _arm)
    due: float | None = None  # when the connection closes unless a request is in
    in_head = True  # the parser is inside a request's head (or waits for one)
    head_bytes = 0  # bytes received that ended inside the current head
    heads = 0  # request heads parsed on this connection

    address: str | None = None  # the client's, once its connection counts for it

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        limits = _limits or configure(load())
        reason = self._refused(limits)
        if reason is not None:
            log.warning("hopper: refused a connection: %s", reason)
            transport.write(_refusal(reason))
            transport.close()
            return
        self._arm(limits.idle_timeout)

    def _refused(self, limits: Limits) -> str | None:
        """Why this new connection is refused, or None after counting it for its
        client's address."""
        if len(self.connections) > limits.max_connections:
            return f"more than {limits.max_connections} connections are open"
        address = self.client[0] if self.client else ""
        held = _by_address.get(address, 0)
        if held >= limits.per_address:
            return f"{address} holds {held} connections, its most ({limits.per_address})"
        _by_address[address] = held + 1
        self.address = address
        return None

    def data_received(self, data: bytes) -> None:
        began_in_head, heads = self.in_head, self.heads
        super().data_received(data)
        # Counted once parsed, so the body that follows a head in one chunk is not, nor
        # a whole request in one chunk (its body may be far longer than any head); a
        # chunk that ended in a new head after a body is not counted either (one chunk
        # at most).
        if (
            self.in_head
            and began_in_head
            and self.heads == heads
            and not self.transport.is_closing()
        ):
            self.head_bytes += len(data)
            if self.head_bytes > MAX_HEAD_BYTES:
                self.send_400_response(
                    f"the request line and headers are longer than {MAX_HEAD_BYTES} bytes"
                )

    def on_headers_complete(self) -> None:
        self._head_parsed()
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._request_parsed()
        super().on_message_complete()

    def _head_parsed(self) -> None:
        self.in_head, self.head_bytes = False, 0
        self.heads += 1

    def _request_parsed(self) -> None:
        self.in_head = True
        self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # uvicorn armed its keep-alive timer: the connection waits for its next request.
        if self.timeout_keep_alive_task is not None:
            self._await_next_request()

    def _await_next_request(self) -> None:
        self._arm((_limits or configure(load())).idle_timeout)

    def send_400_response(self, msg: str) -> None:
        headers = {
            name.decode("latin-1").lower(): value.decode("latin-1")
            for name, value in (self.headers or [])
        }
        error = SqsError("SerializationException", f"The HTTP request could not be parsed: {msg}")
        render = render_json if protocol.detect_protocol(headers) == "json" else render_xml
        rendered = render.render_error(error, new_id())
        head = [b"HTTP/1.1 %d Bad Request\r\n" % rendered.status]
        for name, value in {
            **rendered.headers,
            "content-type": rendered.content_type,
            "content-length": str(len(rendered.body)),
            "connection": "close",
        }.items():
            head.append(f"{name}: {value}\r\n".encode("latin-1"))
        self.transport.write(b"".join([*head, b"\r\n", rendered.body]))
        self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._cancel_timer()
        if self.address is not None:
            left = _by_address.pop(self.address) - 1
            if left:
                _by_address[self.address] = left
            self.address = None
        super().connection_lost(exc)

    # The deadline is armed after every answer and disarmed by every request: rather
    # than a timer made and cancelled for each (two loop calls a request), one timer
    # per connection stays scheduled, and when it fires it looks at `due` (None while
    # a request is in): closes, sleeps on until `due`, or lapses until the next arm.

    def _arm(self, seconds: float) -> None:
        self.due = due = self.loop.time() + seconds
        if self.deadline is not None and self.deadline.when() <= due:
            return  # it fires first, and then waits on for `due`
        self._cancel_timer()
        self.deadline = self.loop.call_at(due, self._expire)

    def _disarm(self) -> None:
        self.due = None

    def _cancel_timer(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None

    def _expire(self) -> None:
        self.deadline = None
        due = self.due
        if due is None:
            return
        if self.loop.time() < due:
            self.deadline = self.loop.call_at(due, self._expire)
        elif not self.transport.is_closing():
            self.transport.close()
