"""The gate every SQS request passes before its action runs: who is calling (the
account it acts for) and whether it may call now.

With authentication off (the default) every request acts for the server's one account
and is rate-limited, if at all, by its client address. With `--auth sigv4` a request
must carry a valid Signature V4 of a known access key; it acts for that key's account
and is rate-limited by that key.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from hopper.auth.credentials import Keys
from hopper.auth.sigv4 import Arrival, verify
from hopper.auth.throttle import RateLimiter


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
        credential = verify(arrival, self.keys, self.wall_clock())
        if self.limiter is not None:
            self.limiter.take(credential.access_key)
        return credential.account_id
