"""The store seam: the one interface every backend implements.

The core owns it (the core calls it; stores plug into it), so the core imports no store
and a new store needs nothing but this module and `hopper.core`. The data types the
stores exchange with the core are defined in `hopper.core.model` (the wire layer speaks
them too) and are re-exported here, so a store can take its whole vocabulary from here.

Each method is one intent, decided atomically inside the store (claim, redrive,
group locking, token issue). Every method takes `now` (epoch seconds, or None for the
store's own clock: the database clock for Postgres) so the contract suite can run
every store under a fake clock. The docstrings below are the contract that
`tests/contract/` asserts on every store.

Stores raise only `hopper.core.errors.QueueNotFound` (and the errors named in a
method's docstring); foreign exceptions never escape a store.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol, runtime_checkable

from hopper.core.model import (
    Delivery,
    MoveTask,
    MoveTaskStatus,
    NewMessage,
    PeekedMessage,
    QueueConfig,
    QueueKey,
    QueueRecord,
    QueueStats,
    Receipt,
    ReceiptOutcome,
    ReceiptResult,
    SendResult,
    VisibilityChange,
)

__all__ = [
    "Delivery",
    "MoveTask",
    "MoveTaskStatus",
    "NewMessage",
    "PeekedMessage",
    "QueueConfig",
    "QueueKey",
    "QueueRecord",
    "QueueStats",
    "QueueStore",
    "Receipt",
    "ReceiptOutcome",
    "ReceiptResult",
    "SendResult",
    "ServingState",
    "VisibilityChange",
    "WakeUp",
]

# (queue, how many messages became receivable; None: every waiter should look again)
WakeUp = Callable[[QueueKey, int | None], None]


class QueueStore(Protocol):
    # --- life cycle -----------------------------------------------------------------

    async def start(self, wake: WakeUp) -> None:
        """Open connections. `wake(key)` is called whenever messages of `key` may have
        become receivable because of another process (a hint: it may be called spuriously
        or not at all; waiters also poll)."""
        ...

    async def close(self) -> None:
        """Release every connection. Idempotent."""
        ...

    # --- queues ---------------------------------------------------------------------

    async def create_queue(
        self,
        key: QueueKey,
        config: QueueConfig,
        tags: Mapping[str, str],
        *,
        now: float | None,
    ) -> tuple[QueueRecord, bool]:
        """Create the queue unless it exists. Returns (record, created): when the queue
        already exists nothing is changed and the existing record is returned with
        created=False, so the caller can compare attributes. Atomic under concurrency."""
        ...

    async def get_queue(self, key: QueueKey) -> QueueRecord | None:
        """The queue's record, or None if it does not exist."""
        ...

    async def list_queues(
        self, account: str, *, prefix: str = "", after: str | None = None, limit: int = 1000
    ) -> list[QueueRecord]:
        """Queues of `account` whose name starts with `prefix`, ordered by name, with
        name > `after` when given, at most `limit`."""
        ...

    async def update_queue(
        self, key: QueueKey, config: QueueConfig, *, now: float | None
    ) -> QueueRecord:
        """Replace the queue's config; sets last_modified_at. Raises QueueNotFound."""
        ...

    async def delete_queue(self, key: QueueKey, *, now: float | None) -> float | None:
        """Delete the queue and all its messages. Returns the deletion time, or None if the
        queue did not exist."""
        ...

    async def last_deleted_at(self, key: QueueKey) -> float | None:
        """When a queue of this key was last deleted (for SQS's 60-second re-create rule),
        or None."""
        ...

    async def set_tags(
        self, key: QueueKey, *, add: Mapping[str, str], remove: Sequence[str]
    ) -> QueueRecord:
        """Add or overwrite the tags in `add`, then remove the keys in `remove`.
        Raises QueueNotFound."""
        ...

    async def dead_letter_sources(self, target: QueueKey) -> list[QueueKey]:
        """Queues whose dead-letter rule names `target`, ordered by name."""
        ...

    # --- messages -------------------------------------------------------------------

    async def send(
        self,
        key: QueueKey,
        messages: Sequence[NewMessage],
        *,
        now: float | None,
        max_depth: int | None = None,
    ) -> list[SendResult]:
        """Enqueue all messages in one atomic step (all or none), in order. A message is
        receivable from now + its `delay`. With `max_depth`, only the first
        max(0, max_depth - depth) messages are considered, depth being the queue's
        unexpired messages (visible, in flight, delayed) as the step sees them; the
        others are not enqueued nor deduplicated and their results say `refused`
        (Postgres: concurrent sends do not see each other, so the queue may pass the
        ceiling by what they add together). On a FIFO queue each message gets a sequence
        number strictly greater than every earlier one of the queue; a message whose
        deduplication id (scoped to the queue) was sent within the last 300 seconds is
        not enqueued again and its result names the original message (duplicate=True),
        even if the original was since deleted. On a standard queue a deduplication id
        is a live key: while a message sent with it is still in the queue (not deleted,
        expired, purged, dead-lettered or moved away) a send with the same key is not
        enqueued and its result names that message (duplicate=True); once it is gone,
        the key is free. Concurrent sends of one key enqueue one message.

        A message with a `lease` (standard queues, without deduplication id, delay,
        group id or depth ceiling: ValueError otherwise) is enqueued already delivered,
        as if a receive had claimed it at its arrival with that visibility timeout: its
        result carries that delivery (receive count 1, a fresh fencing token).
        Raises QueueNotFound."""
        ...

    async def receive(
        self,
        key: QueueKey,
        *,
        max_messages: int,
        visibility_timeout: float,
        now: float | None,
        attempt_id: str | None = None,
    ) -> list[Delivery]:
        """Claim up to `max_messages` receivable messages, approximately oldest first, in
        one atomic step. Each claimed message: receive count + 1, a fresh fencing token
        from a store-wide strictly increasing sequence, visible again at
        now + visibility_timeout, first_received_at set on its first delivery.

        With the queue's retry policy (QueueConfig.retry_policy), each claimed message
        also gets its backoff, drawn now (core/retries.py: delay_after(its new receive
        count)): should the lease end without a delete (run out, or cut to 0 by
        change_visibility), the message is receivable only that much later; the
        delivery's visible_at is still the lease's end. No backoff for a delivery after
        which the dead-letter rule moves the message (no retry follows it).

        A message never has two live leases: two concurrent receives never claim the
        same message. Messages older than the queue's retention period are never
        delivered. When the queue has a dead-letter rule, a message that has already been
        received max_receive_count times from this queue (receives it carried in from a
        queue that dead-lettered it do not count) is moved to the target queue in the
        same step instead of being delivered: it keeps id, body, attributes, sent time,
        receive count and first_received_at (the move is no receive), has no delivery
        there (token 0), and its dead_letter_source is set. A receive delivers or moves
        each message at most once, even when a zero lease leaves it visible, or the
        queue is its own dead-letter queue. On a FIFO queue messages are
        claimed in sequence order per group, and no message of a group that has a
        message in flight is claimed. On a standard queue, fair-queue priority applies
        (core/fairness.py): while a tenant (group id) is noisy, the other tenants'
        receivable messages are claimed first, and noisy tenants' after them, the
        tenant with the fewest in flight first.

        FIFO receive attempts (ReceiveRequestAttemptId): with `attempt_id` on a FIFO
        queue, when an earlier receive of the queue with that id claimed messages less
        than 300 seconds ago and none of them changed since (each still in the queue,
        with the token and lease deadline that receive or a replay of it left), the same
        deliveries are returned again (same tokens and receive counts: no new delivery)
        with their lease reset to now + visibility_timeout. Otherwise the receive claims
        as above and, when it claimed anything, is recorded under `attempt_id` (replacing
        an earlier attempt of that id). Ignored on standard queues. Raises
        QueueNotFound."""
        ...

    async def delete(
        self,
        key: QueueKey,
        receipts: Sequence[Receipt],
        *,
        refuse_expired: bool,
        now: float | None,
    ) -> list[ReceiptResult]:
        """Delete each message whose current token equals the receipt's token. Per
        receipt, in order: OK (deleted), GONE (no such message in this queue),
        SUPERSEDED (a newer delivery exists; current_token set; nothing deleted), or,
        when refuse_expired, EXPIRED (the lease ran out; nothing deleted). A receipt
        whose lease ran out but that is not superseded deletes (when not
        refuse_expired). Raises QueueNotFound."""
        ...

    async def change_visibility(
        self,
        key: QueueKey,
        changes: Sequence[VisibilityChange],
        *,
        refuse_expired: bool,
        now: float | None,
        max_total: float | None = None,
    ) -> list[ReceiptResult]:
        """Make each message visible again at now + timeout (then, with a retry policy,
        after the backoff its claim drew), guarded by its token as in `delete`; a change
        with an `error` keeps it as the message's last_error (StoredMessage). The token
        and the receive count are unchanged. Same outcomes as
        `delete`, and with `max_total`: BEYOND_LIMIT (nothing changed) when now + timeout
        is more than `max_total` seconds after the receive that made the delivery.
        Raises QueueNotFound."""
        ...

    async def purge(self, key: QueueKey, *, now: float | None) -> int:
        """Delete every message of the queue; returns how many. Records the purge time.
        Raises QueueNotFound."""
        ...

    async def last_purged_at(self, key: QueueKey) -> float | None:
        """When the queue was last purged, or None. Raises QueueNotFound."""
        ...

    async def stats(self, key: QueueKey, *, now: float | None) -> QueueStats:
        """Counts of visible, in-flight and delayed messages (unexpired ones only; a
        message backing off after a lease under a retry policy is delayed).
        Raises QueueNotFound."""
        ...

    async def count_in_flight(self, key: QueueKey, *, now: float | None) -> int:
        """How many unexpired messages of the queue are in flight (received, their
        lease not yet run out): `stats(...).in_flight` alone, for AWS's in-flight limit,
        which the core measures on a queue's first receive every few seconds. Cheaper
        than `stats` where a store can count one state alone (a queue touched once in a
        while pays it on nearly every receive). Raises QueueNotFound."""
        ...

    async def next_visible_at(self, key: QueueKey, *, now: float | None) -> float | None:
        """The earliest time after `now` at which a message of the queue becomes
        receivable (a lease or delay running out), or None. Long polls sleep until then
        at the latest. Raises QueueNotFound."""
        ...

    # --- operators (metrics and the dashboard) ------------------------------------------

    async def peek(self, key: QueueKey, *, limit: int, now: float | None) -> list[PeekedMessage]:
        """Up to `limit` unexpired messages of the queue, oldest first (send order),
        whatever their state (visible, in flight, delayed), read without changing
        anything: receive counts, tokens, leases and visibility stay as they were, so
        a peek is never a delivery. Each carries its current fencing token. Raises
        QueueNotFound."""
        ...

    async def discard(self, key: QueueKey, message_id: str, *, now: float | None) -> bool:
        """Delete the one message of this id from the queue, whatever its state (visible,
        in flight, delayed), with no receipt: an operator's removal of one message. Its
        live deduplication key is freed and, on a FIFO queue, its group is no longer held
        by it; a receipt of it then finds it GONE. Returns False when the queue holds no
        such unexpired message (nothing changed). Raises QueueNotFound."""
        ...

    async def accounts(self) -> list[str]:
        """The accounts that own at least one queue, in byte order."""
        ...

    def dead_lettered(self) -> Mapping[QueueKey, int]:
        """Messages this store object has moved to dead-letter queues since it was
        created, per source queue: a running tally for metrics counters (each server
        process counts the moves its own receives made)."""
        ...

    # --- dispatch (Hopper.Dispatch) ---------------------------------------------------

    async def take_dispatch_slot(
        self, key: QueueKey, *, holder: str, slots: int, lease: float, now: float | None
    ) -> int | None:
        """One of the queue's `slots` dispatch slots (0 .. slots-1) for `holder`, held
        until now + `lease`: the slot `holder` already holds (its lease renewed), else
        the lowest slot nobody holds or whose lease has run out; None when every slot
        is held. Atomic across processes, so a queue's dispatch has at most `slots`
        calls in flight whatever the number of hopper processes; a dead process's
        slots come free when their leases run out. A queue that does not exist has
        slots all the same (they are nothing but leases)."""
        ...

    async def give_back_dispatch_slot(self, key: QueueKey, *, holder: str, slot: int) -> None:
        """Free `slot` when `holder` holds it; otherwise nothing changes."""
        ...

    # --- retention ------------------------------------------------------------------

    async def sweep_expired(self, *, limit: int, now: float | None) -> int:
        """Delete up to `limit` messages, of any queues, that are past their queue's
        retention period (sent at or before now - retention); returns how many. In-flight
        messages go too: an expired lease holder's receipt then finds its message GONE."""
        ...

    # --- message move tasks -----------------------------------------------------------

    async def move_messages(
        self, source: QueueKey, destination: QueueKey | None, *, limit: int, now: float | None
    ) -> int:
        """Move up to `limit` receivable messages of `source`, oldest first, in one atomic
        step, to `destination`, or (None) each back to its `dead_letter_source`. A FIFO
        source gives up only what a receive could claim (no message of a group with a
        message in flight, or behind one not yet visible), so each group moves in order. Returns
        how many moved. A moved message keeps its id, body, attributes and sent time, and
        arrives as a fresh delivery candidate: visible at once, receive count 0, no
        delivery (token 0, so no earlier receipt names it), first_received_at unset,
        dead_letter_source cleared. In-flight, delayed and expired messages stay; with
        `destination` None, so do messages without a source or whose source no longer
        exists. Raises QueueNotFound(source), or QueueNotFound(destination) when a named
        destination does not exist."""
        ...

    async def create_move_task(self, task: MoveTask) -> bool:
        """Record a new task, unless its source already has an active (RUNNING or
        CANCELLING) task: then nothing is recorded and False is returned. Atomic under
        concurrency (one active task per source, whatever the number of processes)."""
        ...

    async def get_move_task(self, task_id: str) -> MoveTask | None:
        """The task of this id, or None."""
        ...

    async def list_move_tasks(self, source: QueueKey, *, limit: int) -> list[MoveTask]:
        """The source's tasks, most recently started first, at most `limit`."""
        ...

    async def cancel_move_task(self, task_id: str) -> MoveTask | None:
        """A RUNNING task becomes CANCELLING (its runner finishes it as CANCELLED); any
        other task is left as it is. Returns the task as it is afterwards, or None."""
        ...

    async def advance_move_task(
        self,
        task_id: str,
        *,
        moved: int,
        lease_until: float,
        finish: MoveTaskStatus | None = None,
        failure_reason: str | None = None,
    ) -> MoveTask | None:
        """The runner's report, atomically: add `moved` to the task's count and renew its
        lease; then a CANCELLING task becomes CANCELLED, and a RUNNING one becomes
        `finish` (with `failure_reason`) when given. A task no longer active is left as
        it is. Returns the task afterwards, or None when there is no such task."""
        ...

    async def claim_move_tasks(self, *, lease_until: float, now: float | None) -> list[MoveTask]:
        """Active tasks whose lease has run out (lease_until <= now): each gets the new
        lease and is returned, for the caller to run. Two concurrent callers never
        claim the same task."""
        ...


@runtime_checkable
class ServingState(Protocol):
    """What a store that can lose its backend while running (a connection to another
    server) tells `/health`. Stores whose every call reaches the backend afresh need not
    implement it."""

    def unavailable(self) -> str | None:
        """Why the store cannot serve right now (e.g. its connection was lost and is
        being reopened), or None while it serves."""
        ...
