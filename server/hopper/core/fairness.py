"""Fair queues: which tenants of a standard queue are noisy, and who is served first.

AWS (Developer Guide, "How Amazon SQS fair queues work"): a tenant is the
MessageGroupId of a message on a standard queue, and each message without one is a
tenant of its own. A tenant is noisy while it holds more than 10% of the queue's
in-flight messages and at least 30 of its own. Receives then serve quiet tenants'
messages first; among noisy tenants, the one with the fewest messages in flight
first. Nothing is dropped or throttled: noisy messages are received as usual when no
quiet one is waiting.

hopper measures the concurrency share only. AWS also counts a tenant's share of
recent consumer processing time, and forgets a tenant that sent nothing for five
minutes; neither is kept here (a tenant stops being noisy when its in-flight count
falls under the thresholds, or its backlog is drained).

The stores apply the rule inside their atomic claim: the memory store through
`noisy_tenants` and `priority`, the Postgres store in SQL with these same constants
as parameters.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

# A noisy tenant holds at least this many in-flight messages of its own ...
NOISY_MIN_IN_FLIGHT = 30
# ... and more than this share of all the queue's in-flight messages.
NOISY_SHARE = 0.10


def noisy_tenants(in_flight_groups: Iterable[str | None]) -> dict[str, int]:
    """The noisy tenants and their in-flight counts, given the group id of every
    in-flight message of the queue (None for a message without one: its own tenant,
    which holds one message and is never noisy)."""
    groups = list(in_flight_groups)
    counts = Counter(group for group in groups if group is not None)
    return {
        group: count
        for group, count in counts.items()
        if count >= NOISY_MIN_IN_FLIGHT and count > NOISY_SHARE * len(groups)
    }


def priority(group: str | None, noisy: Mapping[str, int]) -> int:
    """A receive's order among receivable messages: lower first, then oldest first.
    Quiet tenants' messages are 0; a noisy tenant's are its in-flight count."""
    return 0 if group is None else noisy.get(group, 0)
