"""Who may read /metrics: it names every account and queue, with their counts.

Without auth (development, one tenant) it stays open, as Prometheus expects by default.
With `--metrics-token` a scrape must carry `Authorization: Bearer <token>` (what
Prometheus's `authorization` scrape setting sends), with auth on or off. With
`--auth sigv4` and no token it is refused: tenants that may not see each other's
queues must not read them all at /metrics either.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
AsgiApp = Callable[[Scope, Receive, Send], Awaitable[None]]

PATH = "/metrics"


@dataclass(frozen=True)
class Scrapes:
    """`token`: what a scrape must present (None: none needed unless `auth_on`)."""

    token: str | None
    auth_on: bool

    def refusal(self, authorization: str | None) -> str | None:
        """Why a scrape with this Authorization header is refused, or None."""
        if self.token is None:
            if self.auth_on:
                return ("with --auth sigv4, /metrics needs --metrics-token (HOPPER_METRICS_TOKEN)"
                        " and scrapes that send it as a bearer token")
            return None
        scheme, _, presented = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(
            presented.strip().encode(), self.token.encode()
        ):
            return "/metrics needs Authorization: Bearer <the --metrics-token>"
        return None


def guard(app: AsgiApp, scrapes: Scrapes) -> AsgiApp:
    """`app`, with the scrapes `scrapes` refuses answered 401 before they reach it."""

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == PATH:
            authorization = next(
                (v.decode("latin-1") for k, v in scope["headers"] if k == b"authorization"),
                None,
            )
            reason = scrapes.refusal(authorization)
            if reason is not None:
                await _refuse(send, reason)
                return
        await app(scope, receive, send)

    # SQS calls pass through unchanged: the direct path (hopper/direct.py) may serve them.
    guarded.sqs_inner = app  # type: ignore[attr-defined]
    return guarded


async def _refuse(send: Send, reason: str) -> None:
    body = reason.encode()
    await send({
        "type": "http.response.start", "status": 401,
        "headers": [
            (b"content-type", b"text/plain; charset=utf-8"),
            (b"content-length", b"%d" % len(body)),
            (b"www-authenticate", b'Bearer realm="hopper metrics"'),
        ],
    })
    await send({"type": "http.response.body", "body": body})
