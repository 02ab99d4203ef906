"""The console's page: GET /dashboard (or GET / from a browser) and its static files,
served from the package (no build step). Its JSON API is hopper.console.api.

Everything the page shows is put in place as text (never as markup), so a message
body cannot run script in it. The page runs only its own files (its
Content-Security-Policy), and no other page may frame it: with auth off its purge and
delete buttons could otherwise be clickjacked.
"""

from __future__ import annotations

from importlib import resources
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# The page's own script, style and API only: no inline script or style, no other origin,
# no plugin, no <base>, forms post nowhere else, and no page frames it.
_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self';"
    " connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
PAGE_HEADERS = {
    "content-security-policy": _POLICY,
    "x-frame-options": "DENY",  # frame-ancestors' predecessor, for older browsers
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}


def routes() -> list[BaseRoute]:
    return [
        Route("/dashboard", page, methods=["GET"]),
        Mount("/dashboard/static", _not_sniffed(StaticFiles(packages=[("hopper", "static")]))),
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
    return HTMLResponse(html, headers=PAGE_HEADERS)


def _not_sniffed(app: ASGIApp) -> ASGIApp:
    """`app` with `x-content-type-options: nosniff` on its answers: its files are what
    their type says, never script or style guessed from their content."""

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [*message.get("headers", []), (b"x-content-type-options", b"nosniff")]
                message = {**message, "headers": headers}
            await send(message)

        await app(scope, receive, sending)

    return wrapped
