"""The queue core's data: frozen values passed across the store seam.

Nothing here knows HTTP, SQL or an AWS wire spelling. Times are epoch seconds as
floats (stores work in fractional seconds; the wire rounds to SQS's whole seconds
and milliseconds). Durations are seconds as floats.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple, TypeVar, dataclass_transform

from hopper.core.dispatch_targets import DispatchTarget
from hopper.core.retries import RetryPolicy

_Class = TypeVar("_Class")


@dataclass_transform(frozen_default=True)
def value(cls: type[_Class]) -> type[_Class]:
    """A frozen dataclass as mypy sees it (no field can be assigned), made at run time
    as a plain one with slots, hashed by its fields as a frozen one is: for the values
    made per request or per message. A frozen dataclass's __init__ sets each field
    through object.__setattr__: a NewMessage cost 1.6 us to make that way, 0.4 this."""
    return dataclass(slots=True, unsafe_hash=True)(cls)


class QueueKey(NamedTuple):
    """A queue's identity: queues are matched by account and name, whatever host was used.

    A named tuple, not a dataclass: it keys the dicts a request looks in (the queue,
    its record, its waiters, its counts: eight look-ups a SendMessage), and a tuple's
    hash is C's where a dataclass's __hash__ is a Python call (0.03 against 0.15 us)."""

    account: str
    name: str

    @property
    def is_fifo(self) -> bool:
        return self.name.endswith(".fifo")


@dataclass(frozen=True)
class DeadLetterRule:
    """A queue's redrive policy, resolved: where poison messages go and after how many receives."""

    target: QueueKey
    max_receive_count: int


@dataclass(frozen=True)
class QueueConfig:
    """The settable attributes of a queue, typed.

    `extra` holds attributes the core stores and echoes without interpreting
    (Policy, KMS and SSE settings, RedriveAllowPolicy, ...), keyed by their SQS name;
    the typed fields are the ones the core acts on.
    """

    visibility_timeout: float = 30.0
    maximum_message_size: int = 1_048_576
    message_retention_period: float = 345_600.0
    delay_seconds: float = 0.0
    receive_message_wait_time_seconds: float = 0.0
    dead_letter: DeadLetterRule | None = None
    fifo: bool = False
    content_based_deduplication: bool = False
    extra: Mapping[str, str] = field(default_factory=dict)
    # hopper's depth ceiling: at most this many messages (visible, in flight, delayed);
    # None (the default) is unbounded, as on AWS.
    maximum_depth: int | None = None
    # FIFO: deduplication ids are scoped to their message group (DeduplicationScope
    # messageGroup). Decided when the queue is created and kept, as AWS keeps it: a later
    # SetQueueAttributes changes the attribute shown, not how sends are deduplicated.
    group_deduplication: bool = False
    # hopper's Hopper.RetryPolicy (core/retries.py): a lease that ends without a delete
    # hides the message for a backoff; None (the default) is SQS's "visible at once".
    retry_policy: RetryPolicy | None = None
    # hopper's Hopper.Dispatch (core/dispatch_targets.py): hopper itself delivers the
    # queue's messages to this HTTP target; None (the default): clients receive them.
    dispatch: DispatchTarget | None = None


@dataclass(frozen=True)
class QueueRecord:
    """A queue as the store holds it."""

    key: QueueKey
    config: QueueConfig
    created_at: float
    last_modified_at: float
    tags: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class MessageAttribute:
    """One user message attribute. `data_type` is the full type, custom suffix included
    (for example `Number.float`); exactly one of the values is set."""

    data_type: str
    string_value: str | None = None
    binary_value: bytes | None = None


@value
class NewMessage:
    """A message to enqueue, as the core has validated it.

    `id` is chosen by the core so that every store returns the same kind of id.
    `delay` is the effective delay (message timer or queue default), already bounded.
    `group_id` is the FIFO group (or the fair-queue tenant on a standard queue);
    `deduplication_id` is set for FIFO queues (explicit or content-based), and on a
    standard queue it is the optional live deduplication key (a hopper extension).
    """

    id: str
    body: str
    attributes: Mapping[str, MessageAttribute] = field(default_factory=dict)
    trace_header: str | None = None
    delay: float = 0.0
    group_id: str | None = None
    deduplication_id: str | None = None
    # FIFO: the key the deduplication window is kept under when it is not the
    # deduplication id itself (DeduplicationScope messageGroup: group and id together).
    deduplication_key: str | None = None
    # Delivered as it arrives, under a lease of this many seconds: a long poll waiting
    # for it takes it without a claim (core/handoff.py). None: receivable after `delay`.
    lease: float | None = None

    @property
    def window_key(self) -> str | None:
        """What a store deduplicates this message by (FIFO window or live key)."""
        return self.deduplication_key or self.deduplication_id


@value
class SendResult:
    """What a store did with one NewMessage.

    `message_id` differs from the NewMessage's id when the send was a duplicate (FIFO:
    within the deduplication window; standard: while a message with the same live key
    is in the queue): then it is the original's id, and `duplicate` is true.
    `sequence_number` is set for FIFO queues.
    """

    message_id: str
    sequence_number: int | None = None
    duplicate: bool = False
    # Not enqueued: the queue was at the depth ceiling the send was given.
    refused: bool = False
    # The delivery of a message sent with a lease (NewMessage.lease), else None.
    delivery: Delivery | None = None


@value
class StoredMessage:
    """A message as it is kept: the send, plus what the store recorded about it."""

    id: str
    body: str
    attributes: Mapping[str, MessageAttribute]
    trace_header: str | None
    sent_at: float
    group_id: str | None = None
    deduplication_id: str | None = None
    sequence_number: int | None = None
    dead_letter_source: QueueKey | None = None
    # Why its latest dispatch failed (Hopper.LastError): the target's status and the
    # start of its answer, or the connection error. It goes along to a dead-letter queue.
    last_error: str | None = None


@value
class Receipt:
    """Names one delivery of one message: the message and that delivery's fencing token.

    `handle` is the text the client presented, kept only so errors can quote it.
    """

    message_id: str
    token: int
    handle: str = field(default="", compare=False)


@value
class Delivery:
    """One message handed to one receiver under a lease until `visible_at`.

    `token` (the fencing token) is strictly greater than that of any earlier delivery
    of the same message; `receive_count` counts deliveries, this one included.
    """

    message: StoredMessage
    token: int
    receive_count: int
    first_received_at: float
    visible_at: float

    @property
    def receipt(self) -> Receipt:
        return Receipt(self.message.id, self.token)


@dataclass(frozen=True)
class PeekedMessage:
    """A message as an operator sees it without receiving it (the console's browser):
    nothing about it changed by looking. `first_received_at` is None before its first
    delivery; `visible_at` is when it is (or was) receivable; `token` is the fencing
    token of its latest delivery (0: never delivered in this queue); `retry_delay`: the
    retry policy's backoff after its latest lease (visible_at less it is when that
    lease ends or ended)."""

    message: StoredMessage
    receive_count: int
    visible_at: float
    first_received_at: float | None = None
    token: int = 0
    retry_delay: float = 0.0


class ReceiptOutcome(enum.Enum):
    """How a store classified one receipt presented to delete or change_visibility."""

    OK = "ok"
    # The message no longer exists (deleted, expired, purged, moved away).
    GONE = "gone"
    # A newer delivery exists: the presented token is lower than the current one.
    SUPERSEDED = "superseded"
    # The lease ran out and the caller asked for expired receipts to be refused (FIFO).
    EXPIRED = "expired"
    # change_visibility only: the new deadline would fall more than the allowed total
    # after the delivery's receive; nothing changed.
    BEYOND_LIMIT = "beyond_limit"


@value
class ReceiptResult:
    outcome: ReceiptOutcome
    # The message's current token when the outcome is SUPERSEDED, else None.
    current_token: int | None = None


@dataclass(frozen=True)
class VisibilityChange:
    receipt: Receipt
    timeout: float
    # Kept with the message as its last_error when the change applies (a dispatcher
    # releasing what its target failed); None leaves what the message had.
    error: str | None = None


@dataclass(frozen=True)
class QueueStats:
    """Approximate counts, as SQS reports them, plus what an operator needs.

    visible: deliverable now; in_flight: under a lease; delayed: not yet deliverable
    because of a delay and never delivered, or backing off after a lease under the
    queue's retry policy; oldest_sent_at: send time of the oldest
    message still in the queue (None when empty); oldest_visible_sent_at: the same
    among the visible ones (how far behind the consumers are); redelivered: messages
    received more than once; redeliveries: their deliveries beyond the first, summed.
    """

    visible: int
    in_flight: int
    delayed: int
    oldest_sent_at: float | None = None
    oldest_visible_sent_at: float | None = None
    redelivered: int = 0
    redeliveries: int = 0


@value
class MessageDraft:
    """A message as the client asked to send it, before the core applies SQS's rules.

    `delay` None means "the queue's default"; `deduplication_id` None on a FIFO queue
    means content-based deduplication (if the queue allows it).
    """

    body: str
    attributes: Mapping[str, MessageAttribute] = field(default_factory=dict)
    trace_header: str | None = None
    delay: float | None = None
    group_id: str | None = None
    deduplication_id: str | None = None


@dataclass(frozen=True)
class QueuePage:
    """One page of ListQueues / ListDeadLetterSourceQueues."""

    keys: list[QueueKey]
    next_token: str | None


class MoveTaskStatus(enum.Enum):
    """A message move task's life: RUNNING until the source is drained (COMPLETED), a
    cancel arrives (CANCELLING, then CANCELLED once the runner sees it) or a move fails
    (FAILED, with a reason)."""

    RUNNING = "RUNNING"
    COMPLETED = "COMPLETED"
    CANCELLING = "CANCELLING"
    CANCELLED = "CANCELLED"
    FAILED = "FAILED"

    @property
    def active(self) -> bool:
        return self in (MoveTaskStatus.RUNNING, MoveTaskStatus.CANCELLING)


@dataclass(frozen=True)
class MoveTask:
    """One message move task (StartMessageMoveTask), as the store records it.

    `destination` None moves each message back to the queue it was dead-lettered from.
    `max_per_second` None means "as fast as the server likes". `to_move` is the
    source's depth when the task started; `moved` counts what has been moved so far.
    `lease_until` is when the process running the task must have renewed its claim;
    after that any process may take the task over (a restart resumes it).
    """

    id: str
    source: QueueKey
    destination: QueueKey | None
    max_per_second: int | None
    status: MoveTaskStatus
    started_at: float
    to_move: int
    moved: int = 0
    failure_reason: str | None = None
    lease_until: float = 0.0
