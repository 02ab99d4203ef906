"""What an operator does beside SQS's own actions (the console): look at a queue's
messages in their states, and remove one message chosen by id.

Kept apart from QueueService (one method per SQS operation); these take the service
and keep its rules: the same clock, the same events, the same wake-ups.
"""

from __future__ import annotations

import enum

from hopper.core.model import PeekedMessage, QueueKey
from hopper.core.service import QueueService

# The most messages one look returns (an operator reads them; nobody reads thousands).
MAX_PEEK = 100


class MessageState(enum.Enum):
    """Where a message stands, as QueueStats counts it (a dead-letter queue's messages
    are also `dead`: they came from a queue that gave up on them)."""

    VISIBLE = "visible"
    IN_FLIGHT = "in_flight"
    DELAYED = "delayed"


def state_of(peeked: PeekedMessage, now: float) -> MessageState:
    """The stats' rule: receivable now is visible; under a lease is in flight; held back
    otherwise (never delivered yet, or backing off after a lease under a retry
    policy) is delayed."""
    if peeked.visible_at <= now:
        return MessageState.VISIBLE
    leased = peeked.receive_count > 0 and peeked.visible_at - peeked.retry_delay > now
    return MessageState.IN_FLIGHT if leased else MessageState.DELAYED


async def browse(service: QueueService, key: QueueKey) -> list[PeekedMessage]:
    """The queue's oldest MAX_PEEK messages, whatever their state, read without
    changing anything (QueueStore.peek). Raises QueueNotFound."""
    return await service.store.peek(key, limit=MAX_PEEK, now=service.clock.now())


async def discard(service: QueueService, key: QueueKey, message_id: str) -> bool:
    """Delete one message by id, whatever its state, with no receipt. Returns False when
    the queue holds no such message. Counted as a delete; a FIFO group it held may go
    on. Raises QueueNotFound."""
    if not await service.store.discard(key, message_id, now=service.clock.now()):
        return False
    service.deleted(key, 1)
    return True
