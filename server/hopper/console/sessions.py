"""Console sessions under `--auth sigv4`: the page exchanges an access key and its
secret for a token, and sends the token with each request (`Authorization: Bearer`).

A token is `<access key>.<expiry>.<HMAC-SHA256 of both under the key's secret>`: no
server-side state, so any worker process (or host) holding the same credentials
accepts it, and it stops working when its key is removed or its secret changes. The
secret is sent once, at sign-in (put TLS in front of hopper beyond localhost); the
token, not the secret, is what the page keeps (in the tab's sessionStorage).

Whoever holds a key's secret can sign a token, so the server holds the line on what a
token may say: it lives at most LIFETIME_SECONDS from now (an expiry further out is
refused, however it was signed), its expiry is written one way only (no leading zeros:
one session, one token), and an operator revokes every session issued before a moment
with `--console-sessions-since` (a token's issue is its expiry less its lifetime).
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass

from hopper.auth.credentials import Credential, Keys

LIFETIME_SECONDS = 12 * 3600
# Workers and hosts sharing the keys may see the time this far apart: a token another
# one issued a moment ago may expire that much later than one issued here now.
CLOCK_SKEW_SECONDS = 60
# The expiry in its one canonical form: decimal digits without a leading zero.
_TOKEN = re.compile(r"([A-Za-z0-9]{1,128})\.([1-9]\d{0,11})\.([0-9a-f]{64})")


@dataclass(frozen=True)
class Sessions:
    """The console's sessions with auth on: `keys` sign them; those issued before
    `since` (epoch seconds; None: none) are void."""

    keys: Keys
    since: int | None = None


def sign_in(keys: Keys, access_key: str, secret_key: str) -> Credential | None:
    """The credential of `access_key` when `secret_key` is its secret, else None."""
    credential = keys.get(access_key)
    if credential is None:
        hmac.compare_digest(secret_key.encode(), b"-")  # as long as a known key's check
        return None
    if not hmac.compare_digest(secret_key.encode(), credential.secret_key.encode()):
        return None
    return credential


def issue(credential: Credential, now: float) -> tuple[str, int]:
    """A token for `credential` and when it expires (epoch seconds)."""
    expires = int(now) + LIFETIME_SECONDS
    return f"{credential.access_key}.{expires}.{_mac(credential, expires)}", expires


def verify(sessions: Sessions, token: str, now: float) -> Credential | None:
    """The credential a token was issued for, or None: malformed or not canonical,
    expired, living longer than LIFETIME_SECONDS from now, issued before the sessions'
    `since`, for a key no longer known, or not signed with that key's secret."""
    match = _TOKEN.fullmatch(token)
    if match is None:
        return None
    access_key, expires, mac = match.group(1), int(match.group(2)), match.group(3)
    credential = sessions.keys.get(access_key)
    if credential is None or not _current(sessions, expires, now):
        return None
    if not hmac.compare_digest(mac, _mac(credential, expires)):
        return None
    return credential


def _current(sessions: Sessions, expires: int, now: float) -> bool:
    if not now <= expires <= now + LIFETIME_SECONDS + CLOCK_SKEW_SECONDS:
        return False
    return sessions.since is None or expires - LIFETIME_SECONDS >= sessions.since


def _mac(credential: Credential, expires: int) -> str:
    text = f"hopper-console\n{credential.access_key}\n{expires}"
    return hmac.new(credential.secret_key.encode(), text.encode(), hashlib.sha256).hexdigest()
