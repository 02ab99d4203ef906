"""Which hosts a queue's dispatch target may name (`hopper serve --dispatch-allow`).

A queue attribute that makes the server send requests is a request-forgery risk on a
shared server: with authentication on, a target must match the operator's host
patterns, loopback alone unless the operator named others.
"""

from __future__ import annotations

import fnmatch
import ipaddress
from collections.abc import Sequence
from urllib.parse import urlsplit

from hopper.core.dispatch_targets import DispatchTarget
from hopper.core.errors import InvalidAttributeValue

# What a server allows when its operator named no dispatch hosts.
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")


def check_allowed(target: DispatchTarget | None, hosts: Sequence[str] | None) -> None:
    """Refuse a target whose host matches none of `hosts` (shell patterns, `*.internal`;
    an IP pattern may be a network, `10.0.0.0/8`). `hosts` None allows any target (a
    server without authentication, where any caller can do anything anyway)."""
    if target is None or hosts is None:
        return
    host = (urlsplit(target.url).hostname or "").lower()
    if not any(_matches(host, pattern.lower()) for pattern in hosts):
        raise InvalidAttributeValue(
            "dispatch",
            f"this server does not dispatch to {host or 'that URL'}: its operator allows "
            "dispatch targets with `hopper serve --dispatch-allow`",
        )


def _matches(host: str, pattern: str) -> bool:
    if "/" in pattern:
        try:
            return ipaddress.ip_address(host) in ipaddress.ip_network(pattern, strict=False)
        except ValueError:
            return False
    return fnmatch.fnmatchcase(host, pattern)
