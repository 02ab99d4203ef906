"""The queue a subscription's endpoint (a queue ARN) names, by the same region rule as
every queue: `arn:aws:sqs:<region>:<account>:<name>` is the queue `<name>` of that
account in that region, wherever the publish came from."""

from __future__ import annotations

from collections.abc import Callable

from hopper.core.model import QueueKey
from hopper.sns.names import parse_arn
from hopper.wire.regions import scoped_account


def resolver(home_region: str) -> Callable[[str], QueueKey | None]:
    def queue_key(arn: str) -> QueueKey | None:
        parts = parse_arn(arn)
        if parts is None or parts[0] != "sqs" or ":" in parts[3]:
            return None
        _, region, account, name = parts
        return QueueKey(scoped_account(account, region, home_region), name)

    return queue_key
