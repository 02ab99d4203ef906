"""What a web page may make a browser ask of hopper: nothing, unless it is hopper's own
console or an origin the operator allowed.

With auth off (the default, how hopper runs for development) any page a developer
opens could otherwise drive a hopper on 127.0.0.1: a cross-site form POSTs
`Action=PurgeQueue` (a "simple" request: no preflight), an `<img>` GETs
`?Action=DeleteQueue`, and a DNS-rebinding page (its own name pointed at 127.0.0.1)
reads the answers. Browsers say who is calling, and SDKs say none of it, so:

- a request whose `Origin` is neither hopper's own (the scheme and `Host` it was
  asked on) nor allowed (`--allow-origin`) is refused;
- a request without `Origin` that a browser marks as made by another site
  (`Sec-Fetch-Site`: an `<img>`, a script, a link followed) is refused, but for a
  navigation without a query string (a link to the console opens it);
- while hopper listens on a loopback address only, or when `--allow-host` names any,
  a `Host` that is neither a loopback name, an IP address nor allowed is refused: a
  rebinding page asks with its own name.

SDKs send no `Origin` and no `Sec-Fetch-*`, and name the host they connect to, so
none of them is affected. `/health` is exempt from the Host rule (probes name
whatever host they like, and it says nothing). Refusals are 403 `AccessDenied`, in the
request's protocol (the console's API: its JSON).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from hopper.core.ids import new_id
from hopper.settings import Settings
from hopper.wire import errors, protocol, render_json, render_query_json, render_xml
from hopper.wire.render_json import Rendered

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
AsgiApp = Callable[[Scope, Receive, Send], Awaitable[None]]

ANY = "*"
# Where the browser marks a request as its own page's, or the user's (typed, bookmarked).
_OWN_SITES = frozenset({"same-origin", "none"})
_CONSOLE_API = "/dashboard/api/"
HOSTS_REMEMBERED = 1024


@dataclass(frozen=True)
class Browsers:
    """`origins`: origins allowed beyond hopper's own (ANY: every one). `hosts`: the
    Host names answered beyond localhost and IP addresses (ANY: every one)."""

    origins: frozenset[str]
    hosts: frozenset[str]
    # Host header -> whether it is answered: its check parses an IP address (2.4 us, a
    # tenth of hopper's own SendMessage path), and clients send the same few. Bounded.
    _hosts_seen: dict[str, bool] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_settings(cls, settings: Settings) -> Browsers:
        hosts = _names(settings.allow_host)
        if not hosts and not _is_loopback(settings.host):
            hosts = frozenset({ANY})  # reachable by any name anyway: see the README
        return cls(_names(settings.allow_origin), hosts)

    def refusal(self, scope: Scope, headers: Mapping[str, str]) -> str | None:
        """Why a browser may not make this request, or None."""
        host = headers.get("host", "")
        if scope["path"] != "/health" and not self._host_allowed(host):
            return (f"Host {host!r} is not this server's: hopper answers localhost, IP"
                    " addresses and the names of --allow-host")
        origin = headers.get("origin")
        if origin is not None:
            if self._origin_allowed(origin, scope, host):
                return None
            return f"requests from {origin!r} are refused: allow it with --allow-origin"
        site = headers.get("sec-fetch-site")
        if site is None or site in _OWN_SITES or _followed_link(scope, headers):
            return None
        return (f"a {site} request from a web page that does not say its Origin is refused"
                " (a page of an --allow-origin origin must fetch in cors mode)")

    def _host_allowed(self, host: str) -> bool:
        allowed = self._hosts_seen.get(host)
        if allowed is None:
            if len(self._hosts_seen) >= HOSTS_REMEMBERED:
                self._hosts_seen.clear()
            allowed = self._hosts_seen[host] = self._host_answered(host)
        return allowed

    def _host_answered(self, host: str) -> bool:
        if ANY in self.hosts or not host:  # no Host: no browser sent it
            return True
        name = _host_name(host)
        return name in self.hosts or _is_loopback(name) or _is_address(name)

    def _origin_allowed(self, origin: str, scope: Scope, host: str) -> bool:
        origin = origin.lower().rstrip("/")
        own = f"{scope.get('scheme', 'http')}://{host.lower()}"
        return origin == own or origin in self.origins or ANY in self.origins


def guard(app: AsgiApp, browsers: Browsers) -> AsgiApp:
    """`app`, with what `browsers` refuses answered 403 before it reaches it."""

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refused = check(scope)
            if refused is not None:
                await _refuse(send, refused)
                return
        await app(scope, receive, send)

    def check(scope: Scope, said: Mapping[str, str] | None = None) -> Rendered | None:
        """The refusal of an HTTP request `scope` (its type, method, path, scheme,
        query string and headers are read), or None. `said`: its headers decoded
        already (first values), which the direct path has (hopper/direct.py)."""
        reason = browsers.refusal(scope, _said(scope, _ASKED) if said is None else said)
        if reason is None:
            return None
        return _refusal(scope["path"], _said(scope, None), reason)

    # SQS calls pass through after the same check: the direct path (hopper/direct.py),
    # which serves them without ASGI, runs it itself.
    guarded.sqs_inner = app  # type: ignore[attr-defined]
    guarded.sqs_check = check  # type: ignore[attr-defined]
    return guarded


# The headers a browser says who calls in, read from every request (SDK requests carry
# none of them but Host: reading four names costs less than decoding every header).
_ASKED = frozenset({b"host", b"origin", b"sec-fetch-site", b"sec-fetch-mode"})


def _said(scope: Scope, names: frozenset[bytes] | None) -> dict[str, str]:
    """The request's headers named in `names` (None: all), first values."""
    said: dict[str, str] = {}
    for name, value in scope["headers"]:
        if names is None or name in names:
            said.setdefault(name.decode("latin-1"), value.decode("latin-1"))
    return said


def _followed_link(scope: Scope, headers: Mapping[str, str]) -> bool:
    """A top-level navigation without a query string: what a link to the console is.
    It carries no SQS action, and its answer is shown to the user, not to the page."""
    return (
        headers.get("sec-fetch-mode") == "navigate"
        and scope["method"] == "GET"
        and not scope.get("query_string")
    )


def _names(text: str | None) -> frozenset[str]:
    return frozenset(
        name.strip().lower().rstrip("/") for name in (text or "").split(",") if name.strip()
    )


def _host_name(host: str) -> str:
    """The name of a Host header, without its port: `[::1]:9324` -> `::1`."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].partition("]")[0]
    return host.rpartition(":")[0] if host.count(":") == 1 else host


def _is_address(name: str) -> bool:
    """An IP address as Host (`0.0.0.0:9324` reaches a loopback listener too): no DNS
    name, so nothing to rebind. A page that asks with it is of another origin unless
    hopper served it, and its Origin says so."""
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _is_loopback(name: str) -> bool:
    if name == "localhost" or name.endswith(".localhost"):  # RFC 6761: always loopback
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _refusal(path: str, headers: Mapping[str, str], reason: str) -> Rendered:
    if path.startswith(_CONSOLE_API):
        body = orjson.dumps({"error": reason, "code": "AccessDenied"})
        return Rendered(403, "application/json", body)
    error = errors.SqsError("AccessDenied", reason)
    return _sqs_error(protocol.answer_format(headers), error)


async def _refuse(send: Send, rendered: Rendered) -> None:
    await send({
        "type": "http.response.start", "status": rendered.status,
        "headers": [
            (b"content-type", rendered.content_type.encode("latin-1")),
            (b"content-length", b"%d" % len(rendered.body)),
            *((k.encode("latin-1"), v.encode("latin-1")) for k, v in rendered.headers.items()),
        ],
    })
    await send({"type": "http.response.body", "body": rendered.body})


def _sqs_error(form: str, error: errors.SqsError) -> Rendered:
    request_id = new_id()
    if form == "json":
        return render_json.render_error(error, request_id)
    if form == "query-json":
        return render_query_json.render_error(error, request_id)
    return render_xml.render_error(error, request_id)
