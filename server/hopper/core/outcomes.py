"""Receipts and leases: what a receipt names, and what each outcome answers.

`classify_receipt` is the one statement of how a presented receipt relates to the
message's current delivery; every store calls it (the in-memory store on the message it
holds, the Postgres store on the facts its guarded statement returns). The rest turns
the stores' outcomes and the service's checks into the errors SQS answers.
"""

from __future__ import annotations

from hopper.core import limits, messages
from hopper.core.errors import (
    InvalidParameter,
    MessageNotAvailable,
    OverLimit,
    QueueError,
    ReceiptExpired,
    StaleReceipt,
)
from hopper.core.model import (
    QueueConfig,
    QueueKey,
    Receipt,
    ReceiptOutcome,
    ReceiptResult,
    SendResult,
    VisibilityChange,
)

# AWS's text for a receive at the in-flight limit (seen in an AWS error response).
TOO_MANY_IN_FLIGHT = (
    "Too many messages have been received without being deleted.\nPlease delete your "
    "received messages or let them timeout before receiving more."
)


def classify_receipt(
    presented: int,
    current: int | None,
    lapsed: bool | None,
    refuse_expired: bool,
    *,
    beyond: bool = False,
) -> ReceiptResult:
    """The outcome of a receipt carrying token `presented` for a message whose current
    token is `current` (None: no such message in the queue), whose lease has `lapsed`
    (ran out), and (a visibility change) whose new lease would reach `beyond` AWS's
    total visibility limit. OK means the receipt names the current delivery and may act."""
    # A token the message never carried names no delivery of it.
    if current is None or current == 0 or presented > current:
        return ReceiptResult(ReceiptOutcome.GONE)
    if presented < current:
        return ReceiptResult(ReceiptOutcome.SUPERSEDED, current_token=current)
    if refuse_expired and lapsed:
        return ReceiptResult(ReceiptOutcome.EXPIRED)
    if beyond:
        return ReceiptResult(ReceiptOutcome.BEYOND_LIMIT)
    return ReceiptResult(ReceiptOutcome.OK)


def check_receive(
    max_messages: int, visibility_timeout: float | None, wait_time: float | None
) -> None:
    if not 1 <= max_messages <= limits.MAX_RECEIVE_MESSAGES:
        raise InvalidParameter(
            "MaxNumberOfMessages",
            messages.number_text(max_messages),
            f"Must be between 1 and {limits.MAX_RECEIVE_MESSAGES}, if provided.",
        )
    if visibility_timeout is not None:
        check_visibility_timeout(visibility_timeout)
    if wait_time is not None and not 0 <= wait_time <= limits.MAX_WAIT_TIME_SECONDS:
        raise InvalidParameter(
            "WaitTimeSeconds",
            messages.number_text(wait_time),
            f"Must be >= 0 and <= {limits.MAX_WAIT_TIME_SECONDS}, if provided.",
        )


def check_visibility_timeout(timeout: float) -> None:
    if not 0 <= timeout <= limits.MAX_VISIBILITY_TIMEOUT:
        raise InvalidParameter(
            "VisibilityTimeout",
            messages.number_text(timeout),
            f"Must be between 0 and {limits.MAX_VISIBILITY_TIMEOUT}, if provided.",
        )


def delete_error(receipt: Receipt, result: ReceiptResult) -> QueueError | None:
    """DeleteMessage's answer for one store outcome: a message already gone is a
    success, as on AWS."""
    if result.outcome is ReceiptOutcome.SUPERSEDED:
        return StaleReceipt(receipt, _current(result))
    if result.outcome is ReceiptOutcome.EXPIRED:
        return ReceiptExpired(receipt)
    return None


def visibility_error(change: VisibilityChange, result: ReceiptResult) -> QueueError | None:
    """ChangeMessageVisibility's answer: unlike delete, a message that is gone fails."""
    if result.outcome is ReceiptOutcome.GONE:
        return MessageNotAvailable(change.receipt)
    if result.outcome is ReceiptOutcome.BEYOND_LIMIT:
        return InvalidParameter(
            "VisibilityTimeout",
            messages.number_text(change.timeout),
            "Total VisibilityTimeout for the message is beyond the limit "
            f"[{limits.MAX_TOTAL_VISIBILITY_SECONDS} seconds]",
        )
    return delete_error(change.receipt, result)


def queue_full(key: QueueKey, config: QueueConfig) -> OverLimit:
    return OverLimit(
        f"Queue {key.name} holds its maximum depth of {config.maximum_depth} messages: "
        "receive and delete some before sending more."
    )


def refused_as(full: OverLimit, result: SendResult) -> SendResult | QueueError:
    return full if result.refused else result


def _current(result: ReceiptResult) -> int:
    # Stores always set current_token with SUPERSEDED; 0 only guards a broken store.
    return result.current_token if result.current_token is not None else 0
