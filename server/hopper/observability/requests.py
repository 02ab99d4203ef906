"""One SQS request, once answered: its metrics and its log line.

The log line carries the request id that the response carries (`x-amzn-RequestId`,
the `RequestId` of query responses), so a client's report can be found in the logs.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from hopper.observability import metrics

log = logging.getLogger("hopper.access")

# Before the request was decoded, its action is not known.
UNKNOWN_ACTION = "unknown"


@dataclass
class Call:
    request_id: str
    action: str = UNKNOWN_ACTION
    # "ok", or the SQS error name the request was answered with.
    outcome: str = "ok"


def finished(call: Call, status: int, seconds: float) -> None:
    metrics.observe_request(call.action, call.outcome, seconds)
    if log.isEnabledFor(logging.INFO):
        log.info(
            "%s %s %s %d %.1fms",
            call.request_id, call.action, call.outcome, status, seconds * 1000,
            extra={
                "request_id": call.request_id,
                "action": call.action,
                "outcome": call.outcome,
                "status": status,
                "duration_ms": round(seconds * 1000, 3),
            },
        )
