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
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from hopper.core import (
    fifo,
    handoff,
    limits,
    messages,
    pages,
    permissions,
    queues,
    redrive_allow,
)
from hopper.core.bounds import Adjustments, InFlightGauge, floored
from hopper.core.clock import Clock, SystemClock
from hopper.core.deadlines import NextDeadlines
from hopper.core.errors import (
    BatchTooLong,
    InvalidAttributeValue,
    InvalidParameter,
    MessageNotAvailable,
    OverLimit,
    PurgeInProgress,
    QueueDeletedRecently,
    QueueError,
    QueueNotFound,
    ReceiptExpired,
    StaleReceipt,
)
from hopper.core.events import Events, NoEvents
from hopper.core.ids import new_id
from hopper.core.model import (
    Delivery,
    MessageDraft,
    MoveTask,
    NewMessage,
    PeekedMessage,
    QueueConfig,
    QueueKey,
    QueuePage,
    QueueRecord,
    QueueStats,
    Receipt,
    ReceiptOutcome,
    ReceiptResult,
    SendResult,
    VisibilityChange,
)
from hopper.core.move_tasks import MoveTasks
from hopper.core.recent import RecentQueues
from hopper.core.store import QueueStore
from hopper.core.wakeups import Wakeups, Watch

# A long poll never sleeps less than this between looks, so a store clock that runs a
# little behind ours cannot turn the loop into a busy wait.
_MIN_PAUSE = 0.005
# The retention sweeper: messages per store call, and calls per round at most (a round
# never holds the store for long; what is left waits for the next round).
SWEEP_BATCH = 500
SWEEP_ROUNDS = 20
# The most messages one peek returns (an operator reads them; nobody reads thousands).
MAX_PEEK = 100


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
    ) -> None:
        """`enforce_timing_rules` keeps AWS's 60-second rules (re-create after delete,
        purge interval); test suites that create and purge rapidly turn it off.
        `housekeeping_seconds` is the period of the background round started by
        `start`: the retention sweep, and taking over orphaned move tasks.
        `max_in_flight` is AWS's in-flight limit of standard queues (tests pass a small
        one). `visibility_floor`, when set, raises every shorter visibility timeout
        (requested or the queue's default) to it. `events` hears of every send,
        receive and delete (metrics)."""
        self.store = store
        self.clock: Clock = clock or SystemClock()
        self.wakeups = wakeups or Wakeups()
        self._recent = RecentQueues()
        self._deadlines = NextDeadlines()
        self.enforce_timing_rules = enforce_timing_rules
        self.poll_fallback_seconds = poll_fallback_seconds
        self.housekeeping_seconds = housekeeping_seconds
        self.move_tasks = MoveTasks(store, self.clock, self.wakeups.notify)
        self.in_flight = InFlightGauge(max_in_flight, self.clock)
        self.visibility_floor = visibility_floor
        self.events: Events = events or NoEvents()
        self._housekeeper: asyncio.Task[None] | None = None
        self._releases: set[asyncio.Task[None]] = set()
        # Set by drain(): long polls answer at once instead of waiting.
        self.draining = False

    async def start(self) -> None:
        """Start the store, wiring its cross-process wake-ups to the local registry, and
        the background housekeeping round."""
        await self.store.start(self.wakeups.notify)
        self._housekeeper = asyncio.create_task(self._housekeeping(), name="hopper-housekeeping")

    async def close(self) -> None:
        """Stop the background work (move tasks stay recorded and resume later), then
        the store."""
        housekeeper, self._housekeeper = self._housekeeper, None
        if housekeeper is not None:
            housekeeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await housekeeper
        await self.move_tasks.close()
        await asyncio.gather(*self._releases, return_exceptions=True)
        await self.store.close()

    def drain(self) -> None:
        """The server is shutting down: every long poll, waiting or yet to come, answers
        with what it has (usually nothing) instead of holding its request open, so the
        in-flight requests can finish and the process exit. Idempotent."""
        self.draining = True
        self.wakeups.notify_all()

    async def housekeep(self) -> int:
        """One housekeeping round: sweep expired messages (bounded batches) and take over
        move tasks whose runner stopped. Returns how many messages were swept."""
        swept = 0
        for _ in range(SWEEP_ROUNDS):
            batch = await self.store.sweep_expired(limit=SWEEP_BATCH, now=self.clock.now())
            swept += batch
            if batch < SWEEP_BATCH:
                break
        await self.move_tasks.resume_orphans()
        return swept

    async def _housekeeping(self) -> None:
        while True:
            # The store may be down for now: the next round tries again.
            with contextlib.suppress(QueueError):
                await self.housekeep()
            await asyncio.sleep(self.housekeeping_seconds)

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
        queues.check_tags(tags)
        existing = await self.store.get_queue(key)
        if existing is not None:
            queues.check_same(existing, settings)
            return existing
        await self._check_recreate(key)
        await self._check_dead_letter(key, config)
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

    async def list_queues(
        self, account: str, *, prefix: str, max_results: int | None, next_token: str | None
    ) -> QueuePage:
        """ListQueues. Without max_results: up to 1000 queues and no next_token.
        Raises InvalidParameter for max_results outside 1..1000 or a bad next_token."""
        size = pages.page_size(max_results)
        after = pages.decode_token(next_token)
        records = await self.store.list_queues(account, prefix=prefix, after=after, limit=size + 1)
        keys = [record.key for record in records]
        return _page(keys, size, paged=max_results is not None)

    async def delete_queue(self, key: QueueKey) -> None:
        self._recent.forget(key)
        if await self.store.delete_queue(key, now=self.clock.now()) is None:
            raise QueueNotFound(key)
        self.in_flight.forget(key)
        # Long polls on the queue look again and end with QueueNotFound.
        self.wakeups.notify(key)

    async def queue_stats(self, key: QueueKey) -> QueueStats:
        return await self.store.stats(key, now=self.clock.now())

    async def peek(self, key: QueueKey, *, limit: int) -> list[PeekedMessage]:
        """Up to `limit` (1 to MAX_PEEK) messages of the queue, oldest first, read
        without receiving them: the dashboard's look at dead letters. Nothing about the
        messages changes. Raises InvalidParameter for a limit out of range."""
        if not 1 <= limit <= MAX_PEEK:
            raise InvalidParameter("limit", str(limit), f"Must be between 1 and {MAX_PEEK}.")
        return await self.store.peek(key, limit=limit, now=self.clock.now())

    async def set_queue_attributes(self, key: QueueKey, settings: Mapping[str, Any]) -> None:
        """SetQueueAttributes: `settings` as in create_queue. Raises InvalidAttributeValue
        / InvalidAttributeName for changes SQS refuses (queue type, dead-letter target)."""
        record = await self.get_queue(key)
        config = queues.changed_config(record.config, settings)
        if "dead_letter" in settings:
            await self._check_dead_letter(key, config)
        self._recent.forget(key)
        await self.store.update_queue(key, config, now=self.clock.now())
        # A shorter delay or a new rule may make messages receivable sooner.
        self.wakeups.notify(key)

    async def tag_queue(self, key: QueueKey, tags: Mapping[str, str]) -> None:
        record = await self.get_queue(key)
        queues.check_tags(tags, existing=record.tags)
        self._recent.forget(key)
        await self.store.set_tags(key, add=tags, remove=())

    async def untag_queue(self, key: QueueKey, tag_keys: Sequence[str]) -> None:
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
        return _page(keys, size, paged=max_results is not None)

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
        [result] = await self._enqueue(key, [message], record.config.maximum_depth)
        if result.refused:
            raise _queue_full(key, record.config)
        self._wake_for([message], [result], key)
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
        outcomes: list[NewMessage | QueueError] = []
        for draft in drafts:
            try:
                outcomes.append(messages.prepare(draft, record.config, new_id()))
            except QueueError as error:
                outcomes.append(error)
        valid = [outcome for outcome in outcomes if isinstance(outcome, NewMessage)]
        depth = record.config.maximum_depth
        sent = await self._enqueue(key, valid, depth) if valid else []
        self._wake_for(valid, sent, key)
        self.events.sent(key, sum(not (r.duplicate or r.refused) for r in sent))
        full = _queue_full(key, record.config)
        results = iter(sent)
        return [
            _refused_as(full, next(results)) if isinstance(outcome, NewMessage) else outcome
            for outcome in outcomes
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
        record = await self._recent_queue(key)
        _check_receive(max_messages, visibility_timeout, wait_time)
        attempt = attempt_id if key.is_fifo else None
        if attempt is not None:
            fifo.check_attempt_id(attempt)
        config = record.config
        lease = config.visibility_timeout if visibility_timeout is None else visibility_timeout
        lease = floored(lease, self.visibility_floor, adjustments)
        wait = config.receive_message_wait_time_seconds if wait_time is None else wait_time
        if wait <= 0:
            deliveries = await self._claim(key, config, max_messages, lease, attempt)
            if not deliveries and await self._in_flight_room(key) == 0:
                raise OverLimit(_TOO_MANY_IN_FLIGHT)
            return deliveries
        return await self._long_poll(key, config, max_messages, lease, wait, attempt, gone)

    async def delete(self, key: QueueKey, receipt: Receipt) -> None:
        """DeleteMessage. A message already gone is a success (as AWS). Raises
        StaleReceipt (superseded), ReceiptExpired (FIFO only)."""
        [error] = await self.delete_batch(key, [receipt])
        if error is not None:
            raise error

    async def delete_batch(
        self, key: QueueKey, receipts: Sequence[Receipt]
    ) -> list[None | QueueError]:
        results = await self.store.delete(
            key, receipts, refuse_expired=key.is_fifo, now=self.clock.now()
        )
        deleted = sum(r.outcome is ReceiptOutcome.OK for r in results)
        self.in_flight.released(key, deleted)
        self.events.deleted(key, deleted)
        if key.is_fifo and any(r.outcome is ReceiptOutcome.OK for r in results):
            # Deleting a FIFO message unlocks its group: the next one may be receivable.
            self.wakeups.notify(key)
        pairs = zip(receipts, results, strict=True)
        return [_delete_error(receipt, result) for receipt, result in pairs]

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
        outcomes: list[VisibilityChange | QueueError] = []
        for change in changes:
            try:
                _check_visibility_timeout(change.timeout)
                timeout = floored(change.timeout, self.visibility_floor, adjustments)
                outcomes.append(replace(change, timeout=timeout))
            except QueueError as error:
                outcomes.append(error)
        valid = [outcome for outcome in outcomes if isinstance(outcome, VisibilityChange)]
        results = iter(
            await self.store.change_visibility(
                key,
                valid,
                refuse_expired=key.is_fifo,
                now=self.clock.now(),
                max_total=float(limits.MAX_TOTAL_VISIBILITY_SECONDS),
            )
            if valid
            else await self._no_changes(key)
        )
        # Deadlines moved: a waiter may now find a message sooner than it planned.
        self._deadlines.forget(key)
        self.wakeups.notify(key)
        return [
            _visibility_error(outcome, next(results))
            if isinstance(outcome, VisibilityChange)
            else outcome
            for outcome in outcomes
        ]

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

    async def _check_dead_letter(self, source: QueueKey, config: QueueConfig) -> None:
        """A dead-letter target exists, is of the source's type (FIFO or standard), and
        its RedriveAllowPolicy lets `source` name it."""
        rule = config.dead_letter
        if rule is None:
            return
        target = await self.store.get_queue(rule.target)
        if target is None:
            raise InvalidAttributeValue("dead_letter", "Dead letter target does not exist.")
        if target.config.fifo != config.fifo:
            raise InvalidAttributeValue(
                "dead_letter", "Dead-letter queue must be same type of queue as the source."
            )
        if not redrive_allow.permits(target.config.extra.get(redrive_allow.ATTRIBUTE), source):
            raise InvalidAttributeValue(
                "dead_letter",
                f"Queue {source.name} is not allowed to use {rule.target.name} as its "
                "dead-letter queue: the RedriveAllowPolicy of the dead-letter queue denies it.",
            )

    # --- receiving ------------------------------------------------------------------

    async def _claim(
        self,
        key: QueueKey,
        config: QueueConfig,
        max_messages: int,
        lease: float,
        attempt_id: str | None = None,
    ) -> list[Delivery]:
        """Claim up to max_messages, fewer when the in-flight limit leaves less room
        (none at all at the limit)."""
        room = await self._in_flight_room(key)
        if room == 0:
            return []
        deliveries = await self.store.receive(
            key, max_messages=min(max_messages, room), visibility_timeout=lease,
            now=self.clock.now(), attempt_id=attempt_id,
        )
        self.in_flight.claimed(key, len(deliveries))
        self.events.received(key, deliveries)
        if deliveries:
            self._deadlines.lower(key, min(d.visible_at for d in deliveries))
        if config.dead_letter is not None:
            # The claim may have moved messages there: a hint for its waiters.
            self.wakeups.notify(config.dead_letter.target)
        return deliveries

    async def _in_flight_room(self, key: QueueKey) -> int:
        """How many more messages may go in flight: AWS's limit applies to standard
        queues only (a FIFO queue at its own limit answers no error, just nothing)."""
        if key.is_fifo:
            return limits.MAX_RECEIVE_MESSAGES

        async def measure() -> int:
            return (await self.store.stats(key, now=self.clock.now())).in_flight

        return await self.in_flight.room(key, measure)

    async def _long_poll(
        self,
        key: QueueKey,
        config: QueueConfig,
        max_messages: int,
        lease: float,
        wait: float,
        attempt_id: str | None = None,
        gone: Callable[[], Awaitable[object]] | None = None,
    ) -> list[Delivery]:
        """Claim; if nothing came, sleep until a wake-up, the earliest visibility deadline,
        the fallback interval or the poll's own deadline, whichever is first; repeat.
        The watch is held across the loop so a send between two looks is not missed.
        A standard queue's long poll also takes messages sent in this process while it
        sleeps, handed to it as they arrive (core/handoff.py); a FIFO one always looks,
        for group order and receive attempts."""
        deadline = asyncio.get_running_loop().time() + wait
        takes = None if key.is_fifo else lease
        watch: Watch | None = None
        try:
            with self.wakeups.watch(key, capacity=max_messages, lease=takes) as watch:
                return await self._poll(
                    watch, key, config, max_messages, lease, deadline, attempt_id, gone
                )
        finally:
            left = [] if watch is None else watch.take()
            if left:  # handed over as this poll was cancelled: nobody will answer with them
                self._release_later(key, left)

    async def _poll(
        self,
        watch: Watch,
        key: QueueKey,
        config: QueueConfig,
        max_messages: int,
        lease: float,
        deadline: float,
        attempt_id: str | None,
        gone: Callable[[], Awaitable[object]] | None,
    ) -> list[Delivery]:
        loop = asyncio.get_running_loop()
        # A queue just found empty, with no wake-up since, is not looked at again unless
        # a deadline of it has passed (see core/wakeups.py). A retried attempt id always
        # looks: its replay is no new message and announces none.
        skip = (
            attempt_id is None
            and self.wakeups.known_empty(key)
            and not await self._deadline_passed(key)
        )
        while True:
            # Deadlines are looked up as of the claim: a lease that runs out between the
            # claim and the look-up must still cut the pause short.
            looked_at = self.clock.now()
            if skip:
                skip, deliveries = False, []
            else:
                stamp = self.wakeups.looking()
                deliveries = await self._claim(key, config, max_messages, lease, attempt_id)
                if not deliveries:
                    self.wakeups.found_nothing(key, stamp)
            remaining = deadline - loop.time()
            if deliveries or remaining <= 0 or self.draining:
                return deliveries
            pause = min(remaining, self.poll_fallback_seconds)
            upcoming = await self._next_deadline(key, looked_at)
            if upcoming is not None:
                pause = min(pause, max(upcoming - self.clock.time(), _MIN_PAUSE))
            if gone is not None:
                watch.interrupt_when(gone)  # only a poll that sleeps pays for watching
            await watch.wait(pause)
            if watch.interrupted:
                return []  # what was handed meanwhile is released by _long_poll
            handed = watch.take()
            if handed:
                return handed

    async def _enqueue(
        self, key: QueueKey, sent: Sequence[NewMessage], max_depth: int | None
    ) -> list[SendResult]:
        """store.send, with what qualifies handed to idle long polls of this process on
        the way (core/handoff.py)."""
        offers: list[tuple[Watch, int]] = []
        if self.wakeups.takers(key) and handoff.takes_leases(key, sent, max_depth):
            count = sum(handoff.qualifies(message) for message in sent)
            if count:
                room = await self._in_flight_room(key)
                offers = self.wakeups.offer(key, min(count, room))
        if not offers:
            return await self.store.send(key, sent, now=self.clock.now(), max_depth=max_depth)
        leased, owners = handoff.lease_offered(sent, offers)
        try:
            results = await self.store.send(key, leased, now=self.clock.now(), max_depth=max_depth)
        except BaseException:
            for watch, _ in offers:
                watch.hand([])
            raise
        handed = [
            (owner, result.delivery)
            for owner, result in zip(owners, results, strict=True)
            if owner is not None and result.delivery is not None
        ]
        deliveries = [delivery for _, delivery in handed]
        self.in_flight.claimed(key, len(deliveries))
        self.events.received(key, deliveries)
        if deliveries:
            self._deadlines.lower(key, min(d.visible_at for d in deliveries))
        for watch, _ in offers:
            mine = [delivery for owner, delivery in handed if owner is watch]
            if not watch.hand(mine):
                self._release_later(key, mine)
        return results

    def _release_later(self, key: QueueKey, deliveries: list[Delivery]) -> None:
        """Make deliveries nobody will answer with visible again, in the background."""
        task = asyncio.create_task(self._release(key, deliveries), name="hopper-release")
        self._releases.add(task)
        task.add_done_callback(self._releases.discard)

    async def _release(self, key: QueueKey, deliveries: list[Delivery]) -> None:
        changes = [VisibilityChange(d.receipt, 0.0) for d in deliveries]
        with contextlib.suppress(QueueError):  # gone or deleted meanwhile: nothing to do
            await self.change_visibility_batch(key, changes)

    async def _deadline_passed(self, key: QueueKey) -> bool:
        upcoming = await self._next_deadline(key, self.clock.now())
        return upcoming is not None and upcoming <= self.clock.time()

    async def _next_deadline(self, key: QueueKey, looked_at: float | None) -> float | None:
        """The queue's next visibility deadline, shared by this process's long polls
        for a moment (core/deadlines.py)."""
        known, deadline = self._deadlines.get(key, self.clock.time())
        if not known:
            deadline = await self.store.next_visible_at(key, now=looked_at)
            self._deadlines.put(key, deadline)
        return deadline

    def _wake_for(
        self, sent: Sequence[NewMessage], results: Sequence[SendResult], key: QueueKey
    ) -> None:
        """Wake as many local waiters as the send made messages receivable right away;
        a delayed message's deadline is one the waiters should sleep until at most."""
        enqueued = [
            message
            for message, result in zip(sent, results, strict=True)
            if not (result.duplicate or result.refused or result.delivery is not None)
        ]
        receivable = sum(message.delay <= 0 for message in enqueued)
        delays = [message.delay for message in enqueued if message.delay > 0]
        if delays:
            self._deadlines.lower(key, self.clock.time() + min(delays))
        if receivable:
            self.wakeups.notify(key, receivable)

    async def _no_changes(self, key: QueueKey) -> list[ReceiptResult]:
        # Every entry was invalid: the queue must still exist for the call to succeed.
        await self.get_queue(key)
        return []



def _page(keys: list[QueueKey], size: int, *, paged: bool) -> QueuePage:
    """One page of `keys` (fetched with one more than `size` to know if more exist).
    Without MaxResults, SQS returns up to 1000 queues and never a token."""
    more = len(keys) > size
    keys = keys[:size]
    token = pages.encode_token(keys[-1].name) if paged and more and keys else None
    return QueuePage(keys=keys, next_token=token)


def _check_receive(
    max_messages: int, visibility_timeout: float | None, wait_time: float | None
) -> None:
    if not 1 <= max_messages <= limits.MAX_RECEIVE_MESSAGES:
        raise InvalidParameter(
            "MaxNumberOfMessages",
            messages.number_text(max_messages),
            f"Must be between 1 and {limits.MAX_RECEIVE_MESSAGES}, if provided.",
        )
    if visibility_timeout is not None:
        _check_visibility_timeout(visibility_timeout)
    if wait_time is not None and not 0 <= wait_time <= limits.MAX_WAIT_TIME_SECONDS:
        raise InvalidParameter(
            "WaitTimeSeconds",
            messages.number_text(wait_time),
            f"Must be >= 0 and <= {limits.MAX_WAIT_TIME_SECONDS}, if provided.",
        )


def _check_visibility_timeout(timeout: float) -> None:
    if not 0 <= timeout <= limits.MAX_VISIBILITY_TIMEOUT:
        raise InvalidParameter(
            "VisibilityTimeout",
            messages.number_text(timeout),
            f"Must be between 0 and {limits.MAX_VISIBILITY_TIMEOUT}, if provided.",
        )


def _delete_error(receipt: Receipt, result: ReceiptResult) -> QueueError | None:
    """DeleteMessage's answer for one store outcome: a message already gone is a
    success, as on AWS."""
    if result.outcome is ReceiptOutcome.SUPERSEDED:
        return StaleReceipt(receipt, _current(result))
    if result.outcome is ReceiptOutcome.EXPIRED:
        return ReceiptExpired(receipt)
    return None


def _visibility_error(change: VisibilityChange, result: ReceiptResult) -> QueueError | None:
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
    return _delete_error(change.receipt, result)


# AWS's text for a receive at the in-flight limit (seen in an AWS error response).
_TOO_MANY_IN_FLIGHT = (
    "Too many messages have been received without being deleted.\nPlease delete your "
    "received messages or let them timeout before receiving more."
)


def _queue_full(key: QueueKey, config: QueueConfig) -> OverLimit:
    return OverLimit(
        f"Queue {key.name} holds its maximum depth of {config.maximum_depth} messages: "
        "receive and delete some before sending more."
    )


def _refused_as(full: OverLimit, result: SendResult) -> SendResult | QueueError:
    return full if result.refused else result


def _current(result: ReceiptResult) -> int:
    # Stores always set current_token with SUPERSEDED; 0 only guards a broken store.
    return result.current_token if result.current_token is not None else 0
