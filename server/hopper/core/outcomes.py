"""Receipts and leases: what a receipt names, and what each outcome answers.

`classify_receipt` is the one statement of how a presented receipt relates to the
message's current delivery; every store calls it (the in-memory store on the message it
holds, the Postgres store on the facts its guarded statement returns). The rest turns
the stores' outcomes and the service's checks into the errors SQS answers.

Receipt modes. A receipt is superseded once its message has been delivered again.
Strict mode (the default) refuses it: StaleReceipt, so a worker whose lease ran out
learns that someone else holds the message. `hopper serve --receipts aws` answers as AWS
does: ChangeMessageVisibility with a superseded receipt applies to the message's current
lease (recorded on AWS: receive with VisibilityTimeout 0 gives R1, a second receive gives
R2, ChangeMessageVisibility(R1, 0) makes the message visible at once), and DeleteMessage
with one succeeds and deletes ("the request succeeds, but the message might not be
deleted", the API reference). Fencing tokens are issued in both modes. The core presents
such a receipt again with the current token the store reported (`on_current_delivery`),
so each store's guard (one WHERE on the token) stays the only check and no store learns
of modes.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Mapping, Sequence

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


class ReceiptMode(enum.Enum):
    STRICT = "strict"
    AWS = "aws"


RECEIPT_MODES = tuple(mode.value for mode in ReceiptMode)


class Superseded(enum.Enum):
    """The answer to a receipt (still) superseded."""

    STALE = "stale"  # StaleReceipt: strict mode
    EXPIRED = "expired"  # ReceiptExpired: AWS mode on a FIFO queue
    SUCCEEDS = "succeeds"  # no error: AWS mode ("might not be deleted")


def superseded_answer(mode: ReceiptMode, *, fifo: bool) -> Superseded:
    """Strict mode refuses a superseded receipt. AWS mode acts on the current delivery
    (`on_current_delivery`) and, were that superseded in turn, succeeds; but on a FIFO
    queue a superseded receipt's lease has necessarily ended, and AWS refuses an
    expired FIFO receipt ("The receipt handle has expired.")."""
    if mode is ReceiptMode.STRICT:
        return Superseded.STALE
    return Superseded.EXPIRED if fifo else Superseded.SUCCEEDS


def chases(mode: ReceiptMode, *, fifo: bool) -> bool:
    """Whether a superseded receipt is presented again for the current delivery."""
    return superseded_answer(mode, fifo=fifo) is Superseded.SUCCEEDS


# How many times a superseded receipt chases its message's current delivery. A chase
# loses only to a delivery made between the store's two looks, so a second is rare; a
# receipt still superseded after these is answered as AWS documents: success, "but the
# message might not be deleted".
CHASES = 3

# index in the caller's batch -> the current token to present instead; gives their results
Reissue = Callable[[Mapping[int, int]], Awaitable[Mapping[int, ReceiptResult]]]


async def on_current_delivery(
    results: Sequence[ReceiptResult], reissue: Reissue
) -> list[ReceiptResult]:
    """AWS mode: the results of a batch after each superseded receipt was presented
    again with its message's current token (`reissue` does that for the entries it is
    given and returns their new results)."""
    settled = list(results)
    for _ in range(CHASES):
        stale = {
            index: result.current_token
            for index, result in enumerate(settled)
            if result.outcome is ReceiptOutcome.SUPERSEDED and result.current_token
        }
        if not stale:
            break
        for index, result in (await reissue(stale)).items():
            settled[index] = result
    return settled


def delete_error(
    receipt: Receipt, result: ReceiptResult, superseded: Superseded = Superseded.STALE
) -> QueueError | None:
    """DeleteMessage's answer for one store outcome: a message already gone is a
    success, as on AWS; a superseded receipt as the receipt mode says."""
    if result.outcome is ReceiptOutcome.SUPERSEDED and superseded is Superseded.STALE:
        return StaleReceipt(receipt, _current(result))
    if result.outcome is ReceiptOutcome.SUPERSEDED and superseded is Superseded.EXPIRED:
        return ReceiptExpired(receipt)
    if result.outcome is ReceiptOutcome.EXPIRED:
        return ReceiptExpired(receipt)
    return None


def visibility_error(
    change: VisibilityChange,
    result: ReceiptResult,
    superseded: Superseded = Superseded.STALE,
) -> QueueError | None:
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
    return delete_error(change.receipt, result, superseded)


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
