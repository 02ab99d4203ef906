"""RedriveAllowPolicy: which source queues may name a queue as their dead-letter target.

The policy is kept as the client's JSON text (the wire checked its shape); this module
reads it when a source's RedrivePolicy names the queue. Source queues are listed by
ARN (`arn:<partition>:sqs:<region>:<account>:<name>`): the core compares only the
account and name, since one hopper serves one region.
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
    return len(parts) == 6 and parts[4] == key.account and parts[5] == key.name
