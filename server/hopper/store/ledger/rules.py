"""LedgerStore: the QueueStore contract over ledgers (store/ledger/) held in a dict: the
rules of every ledger-based store. The memory store is this class over ledgers that live
in its process (store/memory/); the JetStream store runs it, under compare-and-set, on
the ledgers of the queues a step touches (store/jetstream/steps.py), so the two stores
share one set of rules and import nothing of each other.

One asyncio loop owns the store and no method awaits in the middle of its work, so
each call is atomic without locks. Retention is applied lazily: expired messages are
dropped whenever a method looks at the queue's messages.

Rules stated in the core and called here: receipt classification
(core/outcomes.py), the move-task state changes (core/move_tasks.py), which messages
may be enqueued already delivered (core/handoff.py), fair-queue priority
(core/fairness.py). Rules this store implements itself, as the Postgres store does in
its statements, because each is the atomic step of one store intent and a store must
decide it over its own data: the claim (receive order, group locks, dead-lettering,
fairness ranking), deduplication windows and live keys, the depth ceiling, FIFO
receive attempts, and the move of messages between queues.
tests/contract/ pins every store to the same outcomes for each.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, MutableMapping, Sequence

from hopper.core import fairness, handoff, limits
from hopper.core.clock import Clock, SystemClock
from hopper.core.model import (
    Delivery,
    MoveTask,
    NewMessage,
    PeekedMessage,
    QueueKey,
    QueueStats,
    Receipt,
    ReceiptOutcome,
    ReceiptResult,
    SendResult,
    StoredMessage,
    VisibilityChange,
)
from hopper.core.outcomes import classify_receipt
from hopper.core.store import WakeUp
from hopper.store.ledger import (
    NO_ATTRIBUTES,
    Attempt,
    Message,
    Queue,
    delivery,
    fifo_runs,
    in_send_order,
)
from hopper.store.ledger.records import MIN_DELETIONS_KEPT, QueueRecords
from hopper.store.ledger.slots import DispatchSlots
from hopper.store.ledger.tasks import MoveTaskRecords

# The jitter of every store made without a Random of its own: one seeded from the system
# costs some 13 us, and the JetStream store makes a store for each empty queue's stats.
JITTER = random.Random()


class LedgerStore(QueueRecords, MoveTaskRecords, DispatchSlots):
    """`tokens` and `move_tasks`: the JetStream store runs this store's rules on the
    ledgers and tasks it read, with fencing tokens it resolves at its write (see
    store/jetstream/steps.py); a store of its own starts with none and counts from 1."""

    def __init__(
        self,
        clock: Clock | None = None,
        rng: random.Random | None = None,
        *,
        tokens: Iterator[int] | None = None,
        move_tasks: MutableMapping[str, MoveTask] | None = None,
    ) -> None:
        self._clock: Clock = clock or SystemClock()
        # Draws the retry policy's jitter; a seeded one makes the backoffs repeatable.
        self._rng = rng or JITTER
        self._queues: dict[QueueKey, Queue] = {}
        self._deleted_at: dict[QueueKey, float] = {}
        self._deletions_checked_at = MIN_DELETIONS_KEPT
        # One store-wide sequence, so tokens also increase across messages and queues.
        self._tokens: Iterator[int] = itertools.count(1) if tokens is None else tokens
        self._wake: WakeUp | None = None
        self._move_tasks: MutableMapping[str, MoveTask] = {} if move_tasks is None else move_tasks
        self._dead_lettered: Counter[QueueKey] = Counter()
        # The queues messages were moved into (dead letters, move tasks): see `arrived`.
        self._arrived: set[QueueKey] = set()
        self._slots: dict[QueueKey, dict[int, tuple[str, float]]] = {}

    def hold(self, key: QueueKey, queue: Queue) -> None:
        """Keep `queue`'s ledger as the queue of `key` (the JetStream store's model)."""
        self._queues[key] = queue

    def ledger(self, key: QueueKey) -> Queue:
        """The ledger of the queue of `key`. Raises QueueNotFound."""
        return self._queue(key)

    def move_tasks(self) -> Mapping[str, MoveTask]:
        """Every move task this store holds, by id."""
        return self._move_tasks

    def _now(self, now: float | None) -> float:
        return self._clock.time() if now is None else now

    # --- life cycle -----------------------------------------------------------------

    async def start(self, wake: WakeUp) -> None:
        # One process holds every message, so there is nobody else to hear from.
        self._wake = wake

    async def close(self) -> None:
        self._wake = None

    # --- messages -------------------------------------------------------------------

    async def send(
        self,
        key: QueueKey,
        messages: Sequence[NewMessage],
        *,
        now: float | None,
        max_depth: int | None = None,
    ) -> list[SendResult]:
        handoff.check_leases(key, messages, max_depth)
        queue = self._queue(key)
        at = self._now(now)
        room = len(messages) if max_depth is None else queue.room(max_depth, len(messages), at)
        # Nothing below can fail, so the batch is all or none.
        return [
            self._enqueue(queue, message, at)
            if index < room
            else SendResult(message.id, refused=True)
            for index, message in enumerate(messages)
        ]

    def _enqueue(self, queue: Queue, message: NewMessage, now: float) -> SendResult:
        # Undelayed, it shares its send time's float: 24 bytes less a record.
        visible_at = now + message.delay if message.delay else now
        if _bare(message) and queue.put(message.id, message.body, now, visible_at):
            return SendResult(message.id)
        fifo = queue.record.config.fifo
        live_key = None if fifo else message.deduplication_id
        if live_key is not None:
            holder = self._live_holder(queue, live_key, now)
            if holder is not None:
                return SendResult(holder.stored.id, duplicate=True)
        dedup_id = message.deduplication_id
        window_key = message.window_key
        if fifo and window_key is not None:
            seen = queue.sent_ids.get(window_key)
            if seen is not None and now - seen[0] < limits.DEDUPLICATION_WINDOW_SECONDS:
                return dataclasses.replace(seen[1], duplicate=True)
        sequence = None
        if queue.record.config.fifo:
            queue.last_sequence += 1
            sequence = queue.last_sequence
        stored = StoredMessage(
            id=message.id,
            body=message.body,
            attributes=dict(message.attributes) if message.attributes else NO_ATTRIBUTES,
            trace_header=message.trace_header,
            sent_at=now,
            group_id=message.group_id,
            deduplication_id=dedup_id,
            sequence_number=sequence,
        )
        entry = Message(stored, visible_at=visible_at, live_key=live_key)
        queue.add(entry)
        queue.grouped = queue.grouped or message.group_id is not None
        if message.lease is not None:
            return SendResult(message.id, delivery=self._claim(entry, message.lease, now))
        result = SendResult(message.id, sequence_number=sequence)
        if live_key is not None:
            queue.live_keys[live_key] = message.id
        elif window_key is not None:
            queue.sent_ids[window_key] = (now, result)
        return result

    def _live_holder(self, queue: Queue, live_key: str, now: float) -> Message | None:
        """The message holding `live_key` in the queue, or None when the key is free
        (its message was deleted, expired, purged or moved away)."""
        message_id = queue.live_keys.get(live_key)
        holder = None if message_id is None else queue.find(message_id, now)
        if holder is None or holder.live_key != live_key:
            queue.live_keys.pop(live_key, None)
            return None
        return holder

    async def receive(
        self,
        key: QueueKey,
        *,
        max_messages: int,
        visibility_timeout: float,
        now: float | None,
        attempt_id: str | None = None,
    ) -> list[Delivery]:
        queue = self._queue(key)
        at = self._now(now)
        attempted = attempt_id is not None and queue.record.config.fifo
        if attempted:
            replayed = self._replay(queue, str(attempt_id), visibility_timeout, at)
            if replayed is not None:
                return replayed
        deliveries: list[Delivery] = []
        claimed: set[str] = set()
        moved = True
        # Look again while messages moved: a queue that is its own dead-letter queue has
        # them back at its tail, receivable at once (as the Postgres store finds them).
        # What this receive claimed stays out, even when a zero lease left it visible.
        while moved and len(deliveries) < max_messages:
            moved = False
            wanted = max_messages - len(deliveries) + len(claimed)
            for message in self._receivable(queue, at, wanted, claimed):
                if len(deliveries) >= max_messages:
                    break
                if message.stored.id in claimed:
                    continue
                if self._dead_letter(queue, message, at):
                    moved = True
                    continue
                delay = self._retry_delay(queue, message)
                deliveries.append(self._claim(message, visibility_timeout, at, delay))
                claimed.add(message.stored.id)
        if attempted and deliveries:
            self._record_attempt(queue, str(attempt_id), deliveries, at)
        return deliveries

    def _replay(
        self, queue: Queue, attempt_id: str, visibility_timeout: float, now: float
    ) -> list[Delivery] | None:
        """The deliveries of the queue's attempt of this id, again and with a new lease,
        when it is within its window and none of its messages changed since (deleted,
        expired, delivered again, its visibility changed); else None."""
        attempt = queue.attempts.get(attempt_id)
        if attempt is None or now - attempt.made_at >= limits.RECEIVE_ATTEMPT_WINDOW_SECONDS:
            return None
        messages = []
        for message_id, token, deadline in attempt.entries:
            message = queue.find(message_id, now)
            if message is None or (message.token, message.lease_ends_at) != (token, deadline):
                return None
            messages.append(message)
        replayed = []
        for message in messages:
            message.visible_at = now + visibility_timeout + message.retry_delay
            replayed.append(delivery(message))
        attempt.entries = [(d.message.id, d.token, d.visible_at) for d in replayed]
        return replayed

    def _record_attempt(
        self, queue: Queue, attempt_id: str, deliveries: list[Delivery], now: float
    ) -> None:
        horizon = now - limits.RECEIVE_ATTEMPT_WINDOW_SECONDS
        for old in [a for a, attempt in queue.attempts.items() if attempt.made_at <= horizon]:
            del queue.attempts[old]
        entries = [(d.message.id, d.token, d.visible_at) for d in deliveries]
        queue.attempts[attempt_id] = Attempt(now, entries)

    def _receivable(
        self,
        queue: Queue,
        now: float,
        wanted: int | None = None,
        skip: frozenset[str] | set[str] = frozenset(),
    ) -> Iterator[Message]:
        """Receivable messages in the order a receive takes them: on a FIFO queue each
        group's deliverable run (see store/ledger/groups.py); on a standard queue oldest
        first, noisy tenants' messages after the others (fairness). The caller may claim
        or move what it is given: a standard queue's order is a snapshot (on a plain one
        it stops at the `wanted` first visible messages), and a FIFO queue's runs are
        walked as far as the caller takes them, each run's later messages unchanged by
        what the caller does with its earlier ones. `skip`: what this receive claimed
        already, left out as if it were gone."""
        ordered: Iterable[Message]
        if queue.record.config.fifo:
            ordered = fifo_runs(queue, now, skip)
        else:
            ordered = self._standard_order(queue, now, wanted)
        for message in ordered:
            # The queue's own record (a walk may have handed out a packed one's copy).
            found = None if message.stored.id in skip else queue.find(message.stored.id, now)
            if found is not None:
                yield found

    def _standard_order(self, queue: Queue, now: float, wanted: int | None) -> list[Message]:
        # Only fair queues need the whole queue up front (the in-flight count of each
        # tenant). A plain standard queue's receive looks no further than it takes, so a
        # deep queue costs it no more than a shallow one.
        if not queue.grouped and wanted is not None:
            return list(itertools.islice(queue.visible(now), wanted))
        ordered = list(queue.live(now).values())
        if queue.grouped:
            noisy = fairness.noisy_tenants(m.stored.group_id for m in ordered if m.in_flight(now))
            # A stable sort: oldest first within each priority.
            ordered.sort(key=lambda m: fairness.priority(m.stored.group_id, noisy))
        return [m for m in ordered if m.visible_at <= now]

    def _dead_letter(self, queue: Queue, message: Message, now: float) -> bool:
        """Move `message` to the dead-letter target if it has been received
        max_receive_count times already. True when moved."""
        rule = queue.record.config.dead_letter
        received_here = message.receive_count - message.carried_receive_count
        if rule is None or received_here < rule.max_receive_count:
            return False
        target = self._queues.get(rule.target)
        if target is None:
            # A rule whose target is gone keeps the message where it is, as SQS does.
            return False
        del queue.messages[message.stored.id]
        stored = dataclasses.replace(message.stored, dead_letter_source=queue.record.key)
        # The move is no receive: count and first receive go along unchanged; token 0,
        # so no earlier receipt names it there (its next delivery draws a greater one).
        target.add(
            Message(
                stored,
                visible_at=now,
                receive_count=message.receive_count,
                carried_receive_count=message.receive_count,
                first_received_at=message.first_received_at,
            )
        )
        self._dead_lettered[queue.record.key] += 1
        self._arrived.add(rule.target)
        return True

    def _retry_delay(self, queue: Queue, message: Message) -> float:
        """The backoff after the lease this claim starts, should it end without a delete
        (core/retries.py): none without a retry policy, nor when the dead-letter rule
        takes the message at its next receive (no retry follows, so nothing to wait for)."""
        config = queue.record.config
        policy = config.retry_policy
        if policy is None:
            return 0.0
        receives = message.receive_count + 1
        rule = config.dead_letter
        if rule is not None and rule.target in self._queues and (
            receives - message.carried_receive_count >= rule.max_receive_count
        ):
            return 0.0
        return policy.delay_after(receives, self._rng)

    def _claim(
        self, message: Message, visibility_timeout: float, now: float, retry_delay: float = 0.0
    ) -> Delivery:
        message.token = next(self._tokens)
        message.receive_count += 1
        if message.first_received_at is None:
            message.first_received_at = now
        message.retry_delay = retry_delay
        message.visible_at = now + visibility_timeout + retry_delay
        message.received_at = now
        return delivery(message)

    async def delete(
        self,
        key: QueueKey,
        receipts: Sequence[Receipt],
        *,
        refuse_expired: bool,
        now: float | None,
    ) -> list[ReceiptResult]:
        queue = self._queue(key)
        at = self._now(now)
        results = []
        for receipt in receipts:
            message = queue.find(receipt.message_id, at)
            result = self._check(message, receipt, refuse_expired=refuse_expired, now=at)
            if result.outcome is ReceiptOutcome.OK:
                del queue.messages[receipt.message_id]
            results.append(result)
        return results

    async def change_visibility(
        self,
        key: QueueKey,
        changes: Sequence[VisibilityChange],
        *,
        refuse_expired: bool,
        now: float | None,
        max_total: float | None = None,
    ) -> list[ReceiptResult]:
        queue = self._queue(key)
        at = self._now(now)
        results = []
        for change in changes:
            message = queue.find(change.receipt.message_id, at)
            received = None if message is None else message.received_at
            beyond = max_total is not None and received is not None and (
                at + change.timeout - received > max_total
            )
            result = self._check(
                message, change.receipt, refuse_expired=refuse_expired, now=at, beyond=beyond
            )
            if message is not None and result.outcome is ReceiptOutcome.OK:
                # The lease moves; the retry delay still follows its end.
                message.visible_at = at + change.timeout + message.retry_delay
                if change.error is not None:
                    message.stored = dataclasses.replace(message.stored, last_error=change.error)
            results.append(result)
        return results

    @staticmethod
    def _check(
        message: Message | None,
        receipt: Receipt,
        *,
        refuse_expired: bool,
        now: float,
        beyond: bool = False,
    ) -> ReceiptResult:
        """Classify one receipt against the message's current delivery (core/outcomes.py)."""
        if message is None:
            return classify_receipt(receipt.token, None, None, refuse_expired)
        lapsed = message.lease_ends_at <= now
        return classify_receipt(
            receipt.token, message.token, lapsed, refuse_expired, beyond=beyond
        )

    async def purge(self, key: QueueKey, *, now: float | None) -> int:
        queue = self._queue(key)
        count = len(queue.messages)
        queue.clear()
        # AWS: a FIFO queue's deduplication window goes with its messages.
        queue.sent_ids.clear()
        queue.last_purged_at = self._now(now)
        return count

    async def last_purged_at(self, key: QueueKey) -> float | None:
        return self._queue(key).last_purged_at

    async def stats(self, key: QueueKey, *, now: float | None) -> QueueStats:
        queue = self._queue(key)
        at = self._now(now)
        shelf = queue.live(at)
        # Packed messages (never received) are in flight never, delayed by their send's
        # delay only; so only the records need the delivery rules.
        records = list(shelf.records())
        packed = list(shelf.packed())
        in_flight = sum(1 for m in records if m.in_flight(at))
        # Delayed: by a send's delay, or by a retry policy's backoff after a lease.
        delayed = sum(
            1 for m in records if m.visible_at > at and (m.receive_count == 0 or m.backing_off(at))
        ) + sum(1 for _, visible_at in packed if visible_at > at)
        visible = [m.stored.sent_at for m in records if m.visible_at <= at]
        visible += [sent_at for sent_at, visible_at in packed if visible_at <= at]
        redelivered = [m for m in records if m.receive_count > 1]
        sent = itertools.chain((m.stored.sent_at for m in records), (s for s, _ in packed))
        return QueueStats(
            visible=len(visible),
            in_flight=in_flight,
            delayed=delayed,
            oldest_sent_at=min(sent, default=None),
            oldest_visible_sent_at=min(visible, default=None),
            redelivered=len(redelivered),
            redeliveries=sum(m.receive_count - 1 for m in redelivered),
        )

    async def count_in_flight(self, key: QueueKey, *, now: float | None) -> int:
        queue = self._queue(key)
        at = self._now(now)
        # A packed message was never received.
        return sum(1 for m in queue.live(at).records() if m.in_flight(at))

    async def next_visible_at(self, key: QueueKey, *, now: float | None) -> float | None:
        at = self._now(now)
        shelf = self._queue(key).live(at)
        upcoming = itertools.chain(
            (m.visible_at for m in shelf.records() if m.visible_at > at),
            (visible_at for _, visible_at in shelf.packed() if visible_at > at),
        )
        return min(upcoming, default=None)

    # --- operators (metrics and the dashboard) ------------------------------------------

    async def peek(self, key: QueueKey, *, limit: int, now: float | None) -> list[PeekedMessage]:
        messages = itertools.islice(self._queue(key).live(self._now(now)).values(), limit)
        return [
            PeekedMessage(
                m.stored, m.receive_count, m.visible_at, m.first_received_at, m.token,
                m.retry_delay,
            )
            for m in messages
        ]

    async def discard(self, key: QueueKey, message_id: str, *, now: float | None) -> bool:
        queue = self._queue(key)
        if queue.find(message_id, self._now(now)) is None:
            return False
        # Its live key is freed with it: _live_holder finds the key's holder gone.
        del queue.messages[message_id]
        return True

    async def accounts(self) -> list[str]:
        return sorted({key.account for key in self._queues})

    def dead_lettered(self) -> Mapping[QueueKey, int]:
        return dict(self._dead_lettered)

    def arrived(self) -> frozenset[QueueKey]:
        """The queues this model moved messages into (dead letters, move tasks): the
        JetStream step makes sure none went ahead of a send waiting in a FIFO one's
        backlog (jetstream/steps.py)."""
        return frozenset(self._arrived)

    # --- retention ------------------------------------------------------------------

    async def sweep_expired(self, *, limit: int, now: float | None) -> int:
        at = self._now(now)
        swept = 0
        for queue in self._queues.values():
            swept += queue.messages.expire(queue.horizon(at), limit - swept)
            if swept >= limit:
                break
        return swept

    # --- message move tasks -----------------------------------------------------------

    async def move_messages(
        self, source: QueueKey, destination: QueueKey | None, *, limit: int, now: float | None
    ) -> int:
        queue = self._queue(source)
        named = None if destination is None else self._queue(destination)
        at = self._now(now)
        moved = 0
        # A FIFO queue gives up its messages as a receive would, so each group moves in
        # order and none moves past a message of its group still in flight.
        candidates = (
            in_send_order(queue, at)
            if queue.record.config.fifo
            else [m for m in queue.live(at).values() if m.visible_at <= at]
        )
        for message in candidates:
            if moved >= limit:
                break
            origin = message.stored.dead_letter_source
            target = named or (None if origin is None else self._queues.get(origin))
            if target is None:
                continue
            del queue.messages[message.stored.id]
            stored = dataclasses.replace(message.stored, dead_letter_source=None)
            target.add(Message(stored, visible_at=at))
            self._arrived.add(target.record.key)
            moved += 1
        return moved


def _bare(message: NewMessage) -> bool:
    """Whether a message is nothing but its body, so that its queue may keep it packed
    (store/ledger/shelf.py) until something changes it."""
    return (
        message.lease is None
        and message.group_id is None
        and message.window_key is None
        and message.trace_header is None
        and not message.attributes
    )
