"""What a handler knows about the request it serves, beyond its parameters."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from hopper.core.model import QueueKey
from hopper.wire.regions import scoped_account


@dataclass(slots=True)
class RequestContext:
    """One request's circumstances, built by the transport (http.py) per request, and
    not changed after (not frozen only because a frozen dataclass is dearer to make:
    see endpoint.Incoming).

    `base_url` is "scheme://host[:port]" as the client addressed us, so queue URLs
    handed back work from where the client stands. `path_queue` is set when the
    request was sent to a queue-URL path `/<account>/<name>` (or, for a queue outside
    the server's region, `/<region>/<account>/<name>`). `account` is the caller's
    account id; `owner` the account its queues in this region live under (regions.py).
    """

    protocol: str  # "json" or "query"
    account: str  # the account id this request acts for
    region: str
    base_url: str
    path_queue: QueueKey | None
    trace_header: str | None  # the X-Amzn-Trace-Id request header, if any
    request_id: str  # a fresh uuid4 per request
    # Extension headers a handler adds to its successful answer (hopper's own, such as
    # x-hopper-visibility-floor); SDKs ignore headers they do not know.
    response_headers: dict[str, str] = field(default_factory=dict)
    # Returns once the client has gone away (closed its connection); None where the
    # transport cannot tell. A long poll ends on it rather than take messages for nobody.
    gone: Callable[[], Awaitable[object]] | None = None
    # The server's own region (--region); None where region is moot (the request's own
    # region then counts as home). `region` is the request's (its SigV4 scope's).
    home_region: str | None = None

    @property
    def home(self) -> str:
        return self.region if self.home_region is None else self.home_region

    @property
    def owner(self) -> str:
        """The store account of the caller's queues in the request's region."""
        return scoped_account(self.account, self.region, self.home_region)
