"""The console's page: GET /dashboard (or GET / from a browser) and its static files,
served from the package (no build step). Its JSON API is hopper.console.api.

Everything the page shows is put in place as text (never as markup), so a message
body cannot run script in it.
"""

from __future__ import annotations

from importlib import resources
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles


def routes() -> list[BaseRoute]:
    return [
        Route("/dashboard", page, methods=["GET"]),
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
