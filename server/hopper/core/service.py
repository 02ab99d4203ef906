"""QueueService: one async method per SQS operation, SQS's rules written once.

The wire layer decodes a request into these calls and renders what they return; the
store does each call's work atomically. Every method raises `QueueNotFound` for a
queue that does not exist, and the other `hopper.core.errors` named in its docstring.

Batch methods return one entry per input, in input order: a value for success or a
`QueueError` for that entry's failure (SQS answers partial failures with HTTP 200).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from hopper.core import dispatch_hosts, fifo, limits, messages, outcomes, pages, permissions, queues
from hopper.core.bounds import Adjustments, InFlightGauge, floored
from hopper.core.clock import Clock, SystemClock
from hopper.core.entries import per_entry
from hopper.core.errors import (
    BatchTooLong,
    OverLimit,
    PurgeInProgress,
    QueueDeletedRecently,
    QueueError,
    QueueNotFound,
)
from hopper.core.events import Events, NoEvents
from hopper.core.housekeeping import Housekeeping
from hopper.core.ids import new_id
from hopper.core.leases import Leases
from hopper.core.long_poll import LongPolls
from hopper.core.model import (
    Delivery,
    MessageDraft,
    MoveTask,
    NewMessage,
    QueueConfig,
    QueueKey,
    QueuePage,
    QueueRecord,
    QueueStats,
    Receipt,
    ReceiptOutcome,
    SendResult,
    VisibilityChange,
)
from hopper.core.move_tasks import MoveTasks
from hopper.core.outcomes import ReceiptMode
from hopper.core.recent import RecentQueues
from hopper.core.sends import Sends
from hopper.core.store import QueueStore
from hopper.core.wakeups import Wakeups

# How long a close waits for the background work (housekeeping, move tasks, the long
# polls' releases) before it closes the store under whatever still runs.
_STOP_SECONDS = 3.0


class QueueService:
    def __init__(
        self,
        store: QueueStore,
        *,
        clock: Clock | None = None,
        wakeups: Wakeups | None = None,
        enforce_timing_rules: bool = True,
        poll_fallback_seconds: float = 1.0,
        housekeeping_seconds: float = 5.0,
        max_in_flight: int = limits.MAX_IN_FLIGHT_STANDARD,
        visibility_floor: float | None = None,
        events: Events | None = None,
        receipts: ReceiptMode = ReceiptMode.STRICT,
        dispatch_hosts: Sequence[str] | None = None,
    ) -> None:
        """`enforce_timing_rules` keeps AWS's 60-second rules (re-create after delete,
        purge interval); test suites that create and purge rapidly turn it off.
        `housekeeping_seconds` is the period of the background round started by
        `start`: the retention sweep, and taking over orphaned move tasks.
        `max_in_flight` is AWS's in-flight limit of standard queues (tests pass a small
        one). `visibility_floor`, when set, raises every shorter visibility timeout
        (requested or the queue's default) to it. `events` hears of every send,
        receive and delete (metrics). `receipts`: how superseded receipts are answered
        (core/outcomes.py). `dispatch_hosts`: the host patterns a Hopper.Dispatch
        target may name, None for any (core/dispatch_hosts.py)."""
        self.store = store
        self.dispatch_hosts = dispatch_hosts
        self.clock: Clock = clock or SystemClock()
        self.wakeups = wakeups or Wakeups()
        self._recent = RecentQueues()
        self.enforce_timing_rules = enforce_timing_rules
        self.move_tasks = MoveTasks(store, self.clock, self.wakeups.notify)
        self.in_flight = InFlightGauge(max_in_flight, self.clock)
        self.visibility_floor = visibility_floor
        self.events: Events = events or NoEvents()
        self.receipts = receipts
        self._leases = Leases(store, receipts)
        self._polls = LongPolls(
            store, self.clock, self.wakeups, self.in_flight, self.events,
            poll_fallback_seconds=poll_fallback_seconds, release=self._release,
        )
        self._sends = Sends(store, self.clock, self.wakeups, self._polls)
        self._housekeeping = Housekeeping(
            store, self.clock, self.move_tasks, period=housekeeping_seconds
        )

    async def start(self) -> None:
        """Start the store, wiring its cross-process wake-ups to the local registry, and
        the background housekeeping round."""
        await self.store.start(self.wakeups.notify)
        self._housekeeping.start()

    async def close(self) -> None:
        """Stop the background work (move tasks stay recorded and resume later), then
        the store. The background gets at most `_STOP_SECONDS`, so that the store is
        closed even when it stopped answering mid-round: what is cut off then loses
        nothing (a lease not handed back ends at its deadline, a move task resumes in
        another process or the next start)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(_STOP_SECONDS):
                await self._housekeeping.stop()
                await self.move_tasks.close()
                await self._polls.close()
        await self.store.close()

    def drain(self) -> None:
        """The server is shutting down: every long poll, waiting or yet to come, answers
        with what it has (usually nothing) instead of holding its request open, so the
        in-flight requests can finish and the process exit. Idempotent."""
        self._polls.drain()

    async def housekeep(self) -> int:
        """One housekeeping round: sweep expired messages (bounded batches) and take over
        move tasks whose runner stopped. Returns how many messages were swept."""
        return await self._housekeeping.round()

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
        QueueDeletedRecently, InvalidParameter (queue name rules; as on AWS a `.fifo`
        name without FifoQueue, or FifoQueue without the suffix, breaks them: the
        InvalidParameterRule subclass carries AWS's standalone text), InvalidAttributeName
        (a FIFO-only attribute on a standard queue, an unknown field), InvalidAttributeValue
        (a dead-letter target that does not exist or is of the other type), InvalidParameter
        (tag limits).
        """
        fifo = bool(settings.get("fifo", False))
        queues.check_name(key, fifo)
        config = queues.new_config(settings)
        dispatch_hosts.check_allowed(config.dispatch, self.dispatch_hosts)
        queues.check_tags(tags)
        existing = await self.store.get_queue(key)
        if existing is not None:
            queues.check_same(existing, settings)
            return existing
        await self._check_recreate(key)
        await queues.check_dead_letter(self.store, key, config)
        record, created = await self.store.create_queue(key, config, tags, now=self.clock.now())
        if not created:
            # Lost a race with another creator: the same comparison as above applies.
            queues.check_same(record, settings)
        return record

    async def get_queue(self, key: QueueKey) -> QueueRecord:
        """The queue's record (GetQueueUrl, GetQueueAttributes). Raises QueueNotFound."""
        record = await self.store.get_queue(key)
        if record is None:
            raise QueueNotFound(key)
        self._recent.put(record)
        return record

    async def _recent_queue(self, key: QueueKey) -> QueueRecord:
        """The queue's record as read within the last second (the message paths: see
        core/recent.py). Raises QueueNotFound."""
        return self._recent.get(key) or await self.get_queue(key)

    def all_queues(
        self, *, keep: Callable[[str], bool] | None = None
    ) -> AsyncIterator[QueueRecord]:
        """Every queue of every account, by account then name (the operators' views);
        with `keep`, of the accounts it keeps only (nothing of the others is read)."""
        return pages.all_queues(self.store, keep=keep)

    async def list_queues(
        self, account: str, *, prefix: str, max_results: int | None, next_token: str | None
    ) -> QueuePage:
        """ListQueues. Without max_results: up to 1000 queues and no next_token.
        Raises InvalidParameter for max_results outside 1..1000 or a bad next_token."""
        size = pages.page_size(max_results)
        after = pages.decode_token(next_token)
        records = await self.store.list_queues(account, prefix=prefix, after=after, limit=size + 1)
        keys = [record.key for record in records]
        return pages.page_of(keys, size, paged=max_results is not None)

    async def delete_queue(self, key: QueueKey) -> None:
        self._recent.forget(key)
        if await self.store.delete_queue(key, now=self.clock.now()) is None:
            raise QueueNotFound(key)
        self.in_flight.forget(key)
        # Long polls on the queue look again and end with QueueNotFound; then nothing
        # kept for it stays.
        self.wakeups.notify(key)
        self._polls.forget(key)
        self.events.queue_deleted(key)

    async def queue_stats(self, key: QueueKey) -> QueueStats:
        return await self.store.stats(key, now=self.clock.now())

    async def set_queue_attributes(self, key: QueueKey, settings: Mapping[str, Any]) -> None:
        """SetQueueAttributes: `settings` as in create_queue. Raises InvalidAttributeValue
        / InvalidAttributeName for changes SQS refuses (queue type, dead-letter target)."""
        record = await self.get_queue(key)
        config = queues.changed_config(record.config, settings)
        if "dispatch" in settings:
            dispatch_hosts.check_allowed(config.dispatch, self.dispatch_hosts)
        if "dead_letter" in settings:
            await queues.check_dead_letter(self.store, key, config)
        self._recent.forget(key)
        await self.store.update_queue(key, config, now=self.clock.now())
        # A shorter delay or a new rule may make messages receivable sooner.
        self.wakeups.notify(key)

    async def tag_queue(self, key: QueueKey, tags: Mapping[str, str]) -> None:
        record = await self.get_queue(key)
        queues.check_tags_to_add(tags, record.tags)
        self._recent.forget(key)
        await self.store.set_tags(key, add=tags, remove=())

    async def untag_queue(self, key: QueueKey, tag_keys: Sequence[str]) -> None:
        queues.check_tag_keys(tag_keys)
        self._recent.forget(key)
        await self.store.set_tags(key, add={}, remove=tag_keys)

    async def list_dead_letter_sources(
        self, key: QueueKey, *, max_results: int | None, next_token: str | None
    ) -> QueuePage:
        size = pages.page_size(max_results)
        after = pages.decode_token(next_token)
        await self.get_queue(key)
        sources = await self.store.dead_letter_sources(key)
        keys = [source for source in sources if after is None or source.name > after]
        return pages.page_of(keys, size, paged=max_results is not None)

    async def dead_letter_depth(self, key: QueueKey) -> int | None:
        """How many messages the queue's dead-letter target holds (all of them: visible,
        in flight, delayed), or None when the queue has no dead-letter rule or its target
        is gone. An operator's signal: DLQ growth means something systemic is wrong."""
        record = await self.get_queue(key)
        rule = record.config.dead_letter
        if rule is None:
            return None
        try:
            stats = await self.store.stats(rule.target, now=self.clock.now())
        except QueueNotFound:
            return None
        return stats.visible + stats.in_flight + stats.delayed

    # --- permissions ------------------------------------------------------------------

    async def add_permission(
        self, key: QueueKey, label: str, statement: Mapping[str, Any], policy_id: str
    ) -> None:
        """AddPermission: add `statement` (already in the policy language, its Sid the
        label) to the queue's Policy document, creating the document with `policy_id`.
        Raises InvalidParameter when the label is taken. Permissions are recorded and
        returned, never enforced."""
        record = await self.get_queue(key)
        text = permissions.with_statement(
            record.config.extra.get(permissions.ATTRIBUTE), label, statement, policy_id
        )
        await self._set_policy(key, record.config, text)

    async def remove_permission(self, key: QueueKey, label: str) -> None:
        """RemovePermission. Raises InvalidParameter when no statement has the label."""
        record = await self.get_queue(key)
        text = permissions.without_statement(
            record.config.extra.get(permissions.ATTRIBUTE), label
        )
        await self._set_policy(key, record.config, text)

    async def _set_policy(self, key: QueueKey, config: QueueConfig, text: str | None) -> None:
        extra = dict(config.extra)
        if text is None:
            extra.pop(permissions.ATTRIBUTE, None)
        else:
            extra[permissions.ATTRIBUTE] = text
        self._recent.forget(key)
        await self.store.update_queue(key, replace(config, extra=extra), now=self.clock.now())

    # --- message move tasks -------------------------------------------------------------

    async def start_move_task(
        self, source: QueueKey, destination: QueueKey | None, max_per_second: int | None
    ) -> MoveTask:
        """StartMessageMoveTask: record the task and run it in the background. See
        MoveTasks.start for the errors."""
        task = await self.move_tasks.start(source, destination, max_per_second)
        self.move_tasks.spawn(task)
        return task

    async def cancel_move_task(self, task_id: str, source: QueueKey) -> MoveTask:
        """CancelMessageMoveTask. See MoveTasks.cancel for the errors."""
        return await self.move_tasks.cancel(task_id, source)

    async def list_move_tasks(self, source: QueueKey, max_results: int | None) -> list[MoveTask]:
        """ListMessageMoveTasks. See MoveTasks.list_tasks for the errors."""
        return await self.move_tasks.list_tasks(source, max_results)

    # --- messages -------------------------------------------------------------------

    async def send(self, key: QueueKey, draft: MessageDraft) -> SendResult:
        """SendMessage. Raises MessageTooLong (body + attributes over the queue's
        MaximumMessageSize), InvalidParameter (delay out of range, too many attributes,
        FIFO rules), InvalidMessageContents, OverLimit (the queue holds its
        maximum_depth of messages)."""
        record = await self._recent_queue(key)
        message = messages.prepare(draft, record.config, new_id())
        [result] = await self._sends.send(key, [message], record.config.maximum_depth)
        if result.refused:
            raise outcomes.queue_full(key, record.config)
        self.events.sent(key, 0 if result.duplicate else 1)
        return result

    async def send_batch(
        self, key: QueueKey, drafts: Sequence[MessageDraft]
    ) -> list[SendResult | QueueError]:
        """SendMessageBatch. Entry rules as `send`, per entry; the valid entries are
        enqueued together in one store call. Raises (for the whole call) TooManyEntries,
        EmptyBatch, BatchTooLong (total payload over 1 MiB), InvalidParameterRule (FIFO:
        an entry without MessageGroupId, as AWS answers it).

        At the depth ceiling the entries that fit are sent, in order, and the others fail
        alone with OverLimit: the batch answer AWS gives any entry it cannot take (AWS
        itself has no depth ceiling: its backlog is unlimited)."""
        total = sum(messages.size(draft) for draft in drafts)
        if total > limits.MAX_MESSAGE_SIZE:
            raise BatchTooLong(total, limits.MAX_MESSAGE_SIZE)
        record = await self._recent_queue(key)
        messages.check_batch(drafts, record.config)
        entries: list[NewMessage | QueueError] = []
        for draft in drafts:
            try:
                entries.append(messages.prepare(draft, record.config, new_id()))
            except QueueError as error:
                entries.append(error)
        depth = record.config.maximum_depth

        async def enqueue(valid: list[NewMessage]) -> list[SendResult]:
            sent = await self._sends.send(key, valid, depth)
            self.events.sent(key, sum(not (r.duplicate or r.refused) for r in sent))
            return sent

        async def known() -> None:
            pass  # the queue was read above

        answers = await per_entry(entries, NewMessage, enqueue, known)
        full = outcomes.queue_full(key, record.config)
        return [
            outcomes.refused_as(full, answer) if isinstance(answer, SendResult) else answer
            for answer in answers
        ]

    async def receive(
        self,
        key: QueueKey,
        *,
        max_messages: int = 1,
        visibility_timeout: float | None = None,
        wait_time: float | None = None,
        adjustments: Adjustments | None = None,
        attempt_id: str | None = None,
        gone: Callable[[], Awaitable[object]] | None = None,
    ) -> list[Delivery]:
        """ReceiveMessage. None means the queue's default. With a wait time, returns as
        soon as any message can be delivered, or empty at the deadline. A lease shorter
        than the visibility floor is raised to it (noted in `adjustments`). Raises
        InvalidParameter for values out of range, and OverLimit on a standard queue
        holding max_in_flight messages in flight, when not long polling (as AWS: a long
        poll just finds nothing until leases end).

        `attempt_id` (ReceiveRequestAttemptId, FIFO only, ignored on standard queues as
        AWS documents it for FIFO alone): a retry within 5 minutes gets the deliveries
        of the receive that used it again, with a fresh lease, while none of them was
        deleted, delivered again or had its visibility changed; once one was, the retry
        is a receive like any other. Raises InvalidParameter for an attempt id that is
        not 1 to 128 alphanumerics and punctuation.

        `gone`, when given, returns once the caller has gone away (its connection
        closed): a long poll then ends at once with nothing, so messages sent later are
        not handed to, nor claimed for, a receive nobody will read."""
        record, wait_left = await self._queue_to_poll(key, wait_time)
        outcomes.check_receive(max_messages, visibility_timeout, wait_time)
        attempt = attempt_id if key.is_fifo else None
        if attempt is not None:
            fifo.check_attempt_id(attempt)
        config = record.config
        lease = config.visibility_timeout if visibility_timeout is None else visibility_timeout
        lease = floored(lease, self.visibility_floor, adjustments)
        wait = config.receive_message_wait_time_seconds if wait_time is None else wait_time
        if wait <= 0:
            deliveries = await self._polls.claim(key, config, max_messages, lease, attempt)
            if not deliveries and await self._polls.in_flight_room(key) == 0:
                raise OverLimit(outcomes.TOO_MANY_IN_FLIGHT)
            return deliveries
        wait = wait if wait_left is None else wait_left
        return await self._polls.wait(key, config, max_messages, lease, wait, attempt, gone)

    async def _queue_to_poll(
        self, key: QueueKey, wait_time: float | None
    ) -> tuple[QueueRecord, float | None]:
        """A receive's queue record and, for a long poll given its wait time, what is
        left of it. Such a poll that starts while the store is down waits the outage out
        within its time, as one parked across the outage does (core/long_poll.py); a
        wait time out of range is refused after the read, as before."""
        if wait_time is None or not 0 < wait_time <= limits.MAX_WAIT_TIME_SECONDS:
            return await self._recent_queue(key), None
        return await self._polls.outlast(key, wait_time, lambda: self._recent_queue(key))

    async def delete(self, key: QueueKey, receipt: Receipt) -> None:
        """DeleteMessage. A message already gone is a success (as AWS). Raises
        StaleReceipt (superseded; in AWS receipt mode the current delivery is deleted
        instead), ReceiptExpired (FIFO only; in AWS receipt mode also for a superseded
        receipt, whose lease has necessarily ended)."""
        [error] = await self.delete_batch(key, [receipt])
        if error is not None:
            raise error

    async def delete_batch(
        self, key: QueueKey, receipts: Sequence[Receipt]
    ) -> list[None | QueueError]:
        results = await self._leases.delete(key, receipts, now=self.clock.now())
        deleted = sum(r.outcome is ReceiptOutcome.OK for r in results)
        self.in_flight.released(key, deleted)
        self.deleted(key, deleted)
        pairs = zip(receipts, results, strict=True)
        answer = outcomes.superseded_answer(self.receipts, fifo=key.is_fifo)
        return [outcomes.delete_error(receipt, result, answer) for receipt, result in pairs]

    async def change_visibility(
        self, key: QueueKey, change: VisibilityChange, adjustments: Adjustments | None = None
    ) -> None:
        """ChangeMessageVisibility. Raises StaleReceipt, ReceiptExpired (FIFO),
        MessageNotAvailable (message gone), InvalidParameter (timeout out of range, or
        a lease reaching more than 12 hours past its delivery's receive: AWS's total
        visibility limit, counted from the receive of this delivery as AWS documents).
        A timeout shorter than the visibility floor is raised to it, a release (0)
        included, and noted in `adjustments`."""
        [error] = await self.change_visibility_batch(key, [change], adjustments)
        if error is not None:
            raise error

    async def change_visibility_batch(
        self,
        key: QueueKey,
        changes: Sequence[VisibilityChange],
        adjustments: Adjustments | None = None,
    ) -> list[None | QueueError]:
        entries: list[VisibilityChange | QueueError] = []
        for change in changes:
            try:
                outcomes.check_visibility_timeout(change.timeout)
                timeout = floored(change.timeout, self.visibility_floor, adjustments)
                entries.append(replace(change, timeout=timeout))
            except QueueError as error:
                entries.append(error)
        answer = outcomes.superseded_answer(self.receipts, fifo=key.is_fifo)

        async def apply(valid: list[VisibilityChange]) -> list[None | QueueError]:
            results = await self._leases.change_visibility(key, valid, now=self.clock.now())
            pairs = zip(valid, results, strict=True)
            return [outcomes.visibility_error(one, result, answer) for one, result in pairs]

        errors: list[None | QueueError] = await per_entry(
            entries, VisibilityChange, apply, lambda: self.get_queue(key)
        )
        self._polls.leases_changed(key)
        return errors

    def deleted(self, key: QueueKey, count: int) -> None:
        """`count` messages of `key` were deleted (by receipt or by an operator): the
        events hear of it, and deleting a FIFO message unlocks its group, so the long
        polls look again for the group's next message."""
        self.events.deleted(key, count)
        if key.is_fifo and count:
            self.wakeups.notify(key)

    async def purge(self, key: QueueKey) -> None:
        """PurgeQueue. Raises PurgeInProgress within 60 s of the last purge (when timing
        rules are enforced)."""
        if self.enforce_timing_rules:
            last = await self.store.last_purged_at(key)
            if last is not None and self.clock.time() - last < limits.PURGE_INTERVAL_SECONDS:
                raise PurgeInProgress(key)
        await self.store.purge(key, now=self.clock.now())
        self.in_flight.forget(key)

    # --- rules that need the store ---------------------------------------------------

    async def _check_recreate(self, key: QueueKey) -> None:
        """SQS makes a client wait 60 seconds after DeleteQueue before re-creating."""
        if not self.enforce_timing_rules:
            return
        deleted = await self.store.last_deleted_at(key)
        if deleted is not None and self.clock.time() - deleted < limits.QUEUE_RECREATE_SECONDS:
            raise QueueDeletedRecently(key)

    async def _release(self, key: QueueKey, deliveries: list[Delivery]) -> None:
        """Make deliveries nobody will answer with visible again (the long-poll engine's
        hand-offs that found nobody)."""
        changes = [VisibilityChange(d.receipt, 0.0) for d in deliveries]
        await self.change_visibility_batch(key, changes)
