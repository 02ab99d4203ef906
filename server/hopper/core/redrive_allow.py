"""RedriveAllowPolicy: which source queues may name a queue as their dead-letter target.

The policy is kept as the client's JSON text (the wire checked its shape); this module
reads it when a source's RedrivePolicy names the queue. Source queues are listed by
ARN (`arn:<partition>:sqs:<region>:<account>:<name>`). A queue of the server's own
region has a plain account, one of another region `<account>:<region>` (wire/regions.py
keeps the qualified form inside hopper): an ARN names a queue of another region only
with that region. The home region's name is the wire's, so an ARN of any other region
still names a home queue of that account and name (as before regions).
"""

from __future__ import annotations

import json

from hopper.core.model import QueueKey

ATTRIBUTE = "RedriveAllowPolicy"


def permits(policy_text: str | None, source: QueueKey) -> bool:
    """Whether a dead-letter queue with this policy accepts `source`. No policy (or an
    unreadable one) is `allowAll`, AWS's default."""
    if not policy_text:
        return True
    try:
        policy = json.loads(policy_text)
    except (ValueError, RecursionError):
        return True
    if not isinstance(policy, dict):
        return True
    permission = policy.get("redrivePermission", "allowAll")
    if permission == "denyAll":
        return False
    if permission == "byQueue":
        arns = policy.get("sourceQueueArns") or []
        return any(_names(arn, source) for arn in arns if isinstance(arn, str))
    return True


def _names(arn: str, key: QueueKey) -> bool:
    parts = arn.split(":")
    if len(parts) != 6:
        return False
    account, _, region = key.account.partition(":")
    return parts[4] == account and parts[5] == key.name and region in ("", parts[3])
