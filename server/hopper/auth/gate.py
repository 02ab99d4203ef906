"""The gate every SQS request passes before its action runs: who is calling (the
account it acts for) and whether it may call now.

With authentication off (the default) every request acts for the server's one account
and is rate-limited, if at all, by its client address. With `--auth sigv4` a request
must carry a valid Signature V4 of a known access key; it acts for that key's account
and is rate-limited by that key. A request refused for its signature (none, unknown key,
wrong secret, ...) is counted against its client address instead, so a flood of them
is throttled too: once the address's bucket is empty it is answered RequestThrottled.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from hopper.auth.credentials import CredentialsError, Keys, load_file, parse_environment
from hopper.auth.sigv4 import Arrival, verify
from hopper.auth.throttle import RateLimiter
from hopper.settings import Settings, SettingsError
from hopper.wire.errors import SqsError


@dataclass
class Gate:
    account_id: str  # the account of unauthenticated requests
    keys: Keys | None = None  # None: authentication is off
    limiter: RateLimiter | None = None
    wall_clock: Callable[[], float] = time.time

    def admit(self, arrival: Arrival, client: str | None) -> str:
        """The account `arrival` acts for; raises SqsError (MissingAuthenticationToken,
        InvalidClientTokenId, SignatureDoesNotMatch, ..., RequestThrottled)."""
        if self.keys is None:
            if self.limiter is not None:
                self.limiter.take(client or "unknown")
            return self.account_id
        try:
            credential = verify(arrival, self.keys, self.wall_clock())
        except SqsError:
            if self.limiter is not None:
                # Named apart from the access keys, which share the limiter's table.
                self.limiter.take(f"refused from {client or 'unknown'}")
            raise
        if self.limiter is not None:
            self.limiter.take(credential.access_key)
        return credential.account_id


def from_settings(settings: Settings, environ: Mapping[str, str] | None = None) -> Gate | None:
    """The gate `settings` ask for; None when there is nothing to check. Raises
    SettingsError when `--auth sigv4` has no usable credentials."""
    keys = _keys(settings, os.environ if environ is None else environ)
    limiter = None if settings.rate_limit is None else RateLimiter(settings.rate_limit)
    if keys is None and limiter is None:
        return None
    return Gate(settings.account_id, keys, limiter)


def _keys(settings: Settings, environ: Mapping[str, str]) -> Keys | None:
    if settings.auth == "off":
        return None
    try:
        if settings.credentials_file is not None:
            return load_file(settings.credentials_file)
        inline = environ.get("HOPPER_CREDENTIALS")
        if inline:
            return parse_environment(inline)
    except CredentialsError as error:
        raise SettingsError(str(error)) from None
    raise SettingsError(
        "--auth sigv4 needs credentials: --credentials-file FILE or HOPPER_CREDENTIALS"
    )
