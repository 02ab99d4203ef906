"""QueueService: one async method per SQS operation, SQS's rules written once.

The wire layer decodes a request into these calls and renders what they return; the
store does each call's work atomically. Every method raises `QueueNotFound` for a
queue that does not exist, and the other `hopper.core.errors` named in its docstring.

Batch methods return one entry per input, in input order: a value for success or a
`QueueError` for that entry's failure (SQS answers partial failures with HTTP 200).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hopper.core.clock import Clock, SystemClock
from hopper.core.errors import QueueError
from hopper.core.model import (
    Delivery,
    MessageDraft,
    QueueKey,
    QueuePage,
    QueueRecord,
    QueueStats,
    Receipt,
    SendResult,
    VisibilityChange,
)
from hopper.core.wakeups import Wakeups
from hopper.store.base import QueueStore


class QueueService:
    def __init__(
        self,
        store: QueueStore,
        *,
        clock: Clock | None = None,
        wakeups: Wakeups | None = None,
        enforce_timing_rules: bool = True,
        poll_fallback_seconds: float = 1.0,
    ) -> None:
        """`enforce_timing_rules` keeps AWS's 60-second rules (re-create after delete,
        purge interval); test suites that create and purge rapidly turn it off."""
        self.store = store
        self.clock: Clock = clock or SystemClock()
        self.wakeups = wakeups or Wakeups()
        self.enforce_timing_rules = enforce_timing_rules
        self.poll_fallback_seconds = poll_fallback_seconds

    async def start(self) -> None:
        """Start the store, wiring its cross-process wake-ups to the local registry."""
        raise NotImplementedError

    async def close(self) -> None:
        raise NotImplementedError

    # --- queues ---------------------------------------------------------------------

    async def create_queue(
        self, key: QueueKey, settings: Mapping[str, Any], tags: Mapping[str, str]
    ) -> QueueRecord:
        """Create a queue, or return the existing one when every passed setting equals
        the existing value (AWS's idempotent CreateQueue).

        `settings` holds only what the client passed, keyed by `QueueConfig` field name
        (the wire has already parsed and range-checked values); `extra` is itself a
        mapping of SQS attribute name -> text and is compared key by key.

        Raises QueueNameTaken(attribute=<field name, or the extra's SQS name>),
        QueueDeletedRecently, InvalidParameter (queue name rules), InvalidAttributeValue
        (FIFO name without FifoQueue or the reverse, a dead-letter target that does not
        exist or is of the other type).
        """
        raise NotImplementedError

    async def get_queue(self, key: QueueKey) -> QueueRecord:
        """The queue's record (GetQueueUrl, GetQueueAttributes). Raises QueueNotFound."""
        raise NotImplementedError

    async def list_queues(
        self, account: str, *, prefix: str, max_results: int | None, next_token: str | None
    ) -> QueuePage:
        """ListQueues. Without max_results: up to 1000 queues and no next_token.
        Raises InvalidParameter for max_results outside 1..1000 or a bad next_token."""
        raise NotImplementedError

    async def delete_queue(self, key: QueueKey) -> None:
        raise NotImplementedError

    async def queue_stats(self, key: QueueKey) -> QueueStats:
        raise NotImplementedError

    async def set_queue_attributes(self, key: QueueKey, settings: Mapping[str, Any]) -> None:
        """SetQueueAttributes: `settings` as in create_queue. Raises InvalidAttributeValue
        / InvalidAttributeName for changes SQS refuses (queue type, dead-letter target)."""
        raise NotImplementedError

    async def tag_queue(self, key: QueueKey, tags: Mapping[str, str]) -> None:
        raise NotImplementedError

    async def untag_queue(self, key: QueueKey, tag_keys: Sequence[str]) -> None:
        raise NotImplementedError

    async def list_dead_letter_sources(
        self, key: QueueKey, *, max_results: int | None, next_token: str | None
    ) -> QueuePage:
        raise NotImplementedError

    # --- messages -------------------------------------------------------------------

    async def send(self, key: QueueKey, draft: MessageDraft) -> SendResult:
        """SendMessage. Raises MessageTooLong (body + attributes over the queue's
        MaximumMessageSize), InvalidParameter (delay out of range, too many attributes,
        FIFO rules), InvalidMessageContents."""
        raise NotImplementedError

    async def send_batch(
        self, key: QueueKey, drafts: Sequence[MessageDraft]
    ) -> list[SendResult | QueueError]:
        """SendMessageBatch. Entry rules as `send`, per entry; the valid entries are
        enqueued together in one store call. Raises (for the whole call) TooManyEntries,
        EmptyBatch, BatchTooLong (total payload over 1 MiB)."""
        raise NotImplementedError

    async def receive(
        self,
        key: QueueKey,
        *,
        max_messages: int = 1,
        visibility_timeout: float | None = None,
        wait_time: float | None = None,
    ) -> list[Delivery]:
        """ReceiveMessage. None means the queue's default. With a wait time, returns as
        soon as any message can be delivered, or empty at the deadline. Raises
        InvalidParameter for values out of range."""
        raise NotImplementedError

    async def delete(self, key: QueueKey, receipt: Receipt) -> None:
        """DeleteMessage. A message already gone is a success (as AWS). Raises
        StaleReceipt (superseded), ReceiptExpired (FIFO only)."""
        raise NotImplementedError

    async def delete_batch(
        self, key: QueueKey, receipts: Sequence[Receipt]
    ) -> list[None | QueueError]:
        raise NotImplementedError

    async def change_visibility(self, key: QueueKey, change: VisibilityChange) -> None:
        """ChangeMessageVisibility. Raises StaleReceipt, ReceiptExpired (FIFO),
        MessageNotAvailable (message gone), InvalidParameter (timeout out of range)."""
        raise NotImplementedError

    async def change_visibility_batch(
        self, key: QueueKey, changes: Sequence[VisibilityChange]
    ) -> list[None | QueueError]:
        raise NotImplementedError

    async def purge(self, key: QueueKey) -> None:
        """PurgeQueue. Raises PurgeInProgress within 60 s of the last purge (when timing
        rules are enforced)."""
        raise NotImplementedError
