"""Domain errors. Each carries the facts of what went wrong; `wire/errors.py` is the one
table that turns them into SQS codes, HTTP statuses and per-protocol texts."""

from __future__ import annotations

from dataclasses import dataclass

from hopper.core.model import QueueKey, Receipt


class QueueError(Exception):
    """Base of every error the queue core raises on purpose."""


@dataclass
class QueueNotFound(QueueError):
    key: QueueKey


@dataclass
class QueueNameTaken(QueueError):
    """CreateQueue named an existing queue but passed a different value for `attribute`."""

    key: QueueKey
    attribute: str


@dataclass
class QueueDeletedRecently(QueueError):
    key: QueueKey


@dataclass
class PurgeInProgress(QueueError):
    key: QueueKey


@dataclass
class InvalidParameter(QueueError):
    """A request parameter has a value SQS rejects. `reason` is SQS's own sentence."""

    parameter: str
    value: str
    reason: str


@dataclass
class InvalidParameterRule(InvalidParameter):
    """An InvalidParameterValue that AWS words as `reason` alone (for example "Message
    (user) attribute 'X' must contain a non-empty value of type 'String'."), not as
    "Value V for parameter P is invalid. Reason: ...". Until the wire table has its own
    entry it renders as its base class."""


@dataclass
class InvalidAttributeValue(QueueError):
    attribute: str
    reason: str


@dataclass
class InvalidAttributeName(QueueError):
    """An attribute SQS does not take here. `reason` is AWS's own sentence where it has
    one; without it the wire says "Unknown Attribute <name>."."""

    attribute: str
    reason: str | None = None


@dataclass
class MessageTooLong(QueueError):
    """The message's body plus attributes exceed `limit` bytes."""

    size: int
    limit: int


@dataclass
class InvalidMessageContents(QueueError):
    """The body or a string attribute holds characters outside SQS's allowed set."""

    what: str


@dataclass
class StaleReceipt(QueueError):
    """The receipt names a delivery that has been superseded by a newer one (hopper's
    deliberate deviation from AWS, which "succeeds" without deleting)."""

    receipt: Receipt
    current: int


@dataclass
class ReceiptExpired(QueueError):
    """FIFO only, as AWS: the receipt's lease ran out before it was used."""

    receipt: Receipt


@dataclass
class MessageNotAvailable(QueueError):
    """ChangeMessageVisibility on a message that no longer exists."""

    receipt: Receipt


@dataclass
class InvalidReceipt(QueueError):
    """The receipt handle is not one hopper issued (garbage, or for another queue)."""

    receipt_handle: str


@dataclass
class TooManyEntries(QueueError):
    count: int
    limit: int = 10


class EmptyBatch(QueueError):
    pass


@dataclass
class InvalidBatchEntryId(QueueError):
    entry_id: str


@dataclass
class BatchEntryIdsNotDistinct(QueueError):
    entry_id: str


@dataclass
class BatchTooLong(QueueError):
    size: int
    limit: int


@dataclass
class OverLimit(QueueError):
    reason: str


@dataclass
class UnsupportedOperation(QueueError):
    reason: str


@dataclass
class MissingParameter(QueueError):
    """A parameter SQS requires in this situation is absent (for example MessageGroupId
    on a FIFO queue)."""

    parameter: str


@dataclass
class StoreUnavailable(QueueError):
    """The store failed or could not be reached; the operation may not have happened.
    The client should retry (SQS's own answer is a 5xx)."""

    reason: str


@dataclass
class ResourceNotFound(QueueError):
    """A move-task resource does not exist: the queue named by `parameter` (SourceArn,
    DestinationArn), or, with `parameter` None, the task itself."""

    parameter: str | None = None
