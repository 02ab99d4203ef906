"""Handing arriving messages straight to the long polls waiting for them in this process.

A long poll waiting on a standard queue was woken by a send, claimed what the send had
enqueued and answered: a second store round trip after the send's own, and at a steady
trickle of messages a third of all statements. Instead a send in the same process
enqueues the message already delivered to an idle long poll (the insert carries the
lease, receive count 1 and a fresh fencing token, as a claim would set them) and hands
the delivery over (core/wakeups.py); the long poll answers at once. To the client it is
the receive of a message claimed the moment it arrived.

Only messages a claim would take at once and as they are qualify: on a standard queue
without a depth ceiling, with no delay and no group id (a fair queue's tenants go through
the claim's fairness rule), in a send without live keys (those need the statement that
looks them up). A FIFO queue's claim keeps group order and receive attempts: never
handed. Nor is anything handed past AWS's in-flight limit.

A long poll whose client has gone by the time its deliveries arrive leaves them leased
to nobody; the service releases them (visible again at once, the receive counted), as
it does deliveries handed to a long poll that left before taking them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from hopper.core.model import NewMessage, QueueKey
from hopper.core.wakeups import Watch


def qualifies(message: NewMessage) -> bool:
    """Whether `message` may be enqueued already delivered, in a send that may carry
    such messages (`takes_leases`)."""
    return message.delay <= 0 and message.group_id is None and message.deduplication_id is None


def takes_leases(key: QueueKey, messages: Sequence[NewMessage], max_depth: int | None) -> bool:
    """Whether a send of `messages` may carry messages enqueued already delivered: a
    standard queue, no depth ceiling, and no live key to look up in the whole send."""
    return (
        not key.is_fifo
        and max_depth is None
        and all(message.deduplication_id is None for message in messages)
    )


def check_leases(key: QueueKey, messages: Sequence[NewMessage], max_depth: int | None) -> None:
    """For stores: raise ValueError when a message has a lease it may not have."""
    leased = [message for message in messages if message.lease is not None]
    if leased and not (
        takes_leases(key, messages, max_depth) and all(qualifies(m) for m in leased)
    ):
        raise ValueError("this send cannot enqueue messages already delivered")


def lease_offered(
    messages: Sequence[NewMessage], offers: Sequence[tuple[Watch, int]]
) -> tuple[list[NewMessage], list[Watch | None]]:
    """`messages` with the offers' leases on the first that qualify, in send order, and
    for each message the watch it is for (None: enqueued as usual)."""
    owners = [watch for watch, count in offers for _ in range(count)]
    leased: list[NewMessage] = []
    owner_of: list[Watch | None] = []
    for message in messages:
        owner = owners.pop(0) if owners and qualifies(message) else None
        leased.append(message if owner is None else replace(message, lease=owner.lease))
        owner_of.append(owner)
    return leased, owner_of
