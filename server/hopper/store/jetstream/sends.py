"""Sends that go to a queue's backlog (see `backlog.py`): every send to a standard
queue without deduplication id, lease or depth ceiling, and every FIFO send without a
depth ceiling, whose deduplication ids are decided one entry each (`deduplication.py`).
Sends with a live deduplication key, a lease or a ceiling need the queue's ledger and
go through a step.

FIFO sends to one queue that arrive while its round is on its way go together in its
next round (`FifoSends`), as plain sends go together in a publish: their deduplication
ids' entries created at once, one publish, one record of where their messages went.
Each round is a round trip to create ids, a publish and its acknowledgement, a record
and a wake-up hint: done once for several sends rather than for each (bench/README.md).
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import Sequence

from hopper.core.errors import StoreUnavailable
from hopper.core.model import NewMessage, QueueRecord, SendResult, StoredMessage
from hopper.store.jetstream.backlog import Backlog
from hopper.store.jetstream.deduplication import Taken, Windows


def backlogged(record: QueueRecord, messages: Sequence[NewMessage], max_depth: int | None) -> bool:
    """Whether a send goes to the queue's backlog rather than through its ledger."""
    if max_depth is not None:
        return False
    if record.config.fifo:
        return True
    return all(m.deduplication_id is None and m.lease is None for m in messages)


def entry(message: NewMessage, at: float) -> tuple[StoredMessage, float]:
    """A send as its backlog entry holds it: the message, and when it is visible."""
    stored = StoredMessage(
        message.id,
        message.body,
        message.attributes,
        message.trace_header,
        sent_at=at,
        group_id=message.group_id,
        deduplication_id=message.deduplication_id,
    )
    return stored, at + message.delay if message.delay else at


async def send_plain(
    backlog: Backlog, incarnation: str, messages: Sequence[NewMessage], at: float
) -> list[SendResult]:
    await backlog.publish_gathered(incarnation, [entry(m, at) for m in messages])
    return [SendResult(m.id) for m in messages]


@dataclasses.dataclass(frozen=True)
class _Waiting:
    """A FIFO send waiting for its queue's next round, and the future that answers it."""

    messages: Sequence[NewMessage]
    at: float
    waiter: asyncio.Future[list[SendResult]]


@dataclasses.dataclass
class _Send:
    """A FIFO send in its round: the first message of each of its deduplication ids (a
    later message of the send with an earlier one's id is its duplicate), its answers
    so far, and the messages it publishes."""

    waiting: _Waiting
    first: dict[str, int]
    results: list[SendResult | None]
    fresh: list[int] = dataclasses.field(default_factory=list)

    @classmethod
    def of(cls, waiting: _Waiting) -> _Send:
        first: dict[str, int] = {}
        for index, message in enumerate(waiting.messages):
            if message.window_key is not None:
                first.setdefault(message.window_key, index)
        return cls(waiting, first, [None] * len(waiting.messages))

    def answers(self) -> list[SendResult]:
        return [
            result
            if result is not None
            else dataclasses.replace(
                self.results[self.first[str(m.window_key)]] or SendResult(m.id), duplicate=True
            )
            for m, result in zip(self.waiting.messages, self.results, strict=True)
        ]


def _apart(waiting: list[_Waiting]) -> tuple[list[_Waiting], list[_Waiting]]:
    """The sends of one round, and those left for the next: from the first send sharing
    a deduplication id with an earlier one of the round on. In the next round the
    earlier one's id is taken and recorded, so the later is answered as its duplicate."""
    keys: set[str] = set()
    for index, one in enumerate(waiting):
        own = {m.window_key for m in one.messages if m.window_key is not None}
        if keys & own:
            return waiting[:index], waiting[index:]
        keys |= own
    return waiting, []


class FifoSends:
    """FIFO sends to the queues' backlogs, a round at a time per queue."""

    def __init__(self, backlog: Backlog, windows: Windows) -> None:
        self._backlog = backlog
        self.windows = windows
        # incarnation -> sends waiting for the queue's next round, and the task that
        # runs its rounds
        self._waiting: dict[str, list[_Waiting]] = {}
        self._running: dict[str, asyncio.Task[None]] = {}

    async def send(
        self, incarnation: str, messages: Sequence[NewMessage], at: float
    ) -> list[SendResult]:
        """Send the messages in the queue's next round; a lone send waits one turn of
        the event loop. Concurrent sends have no order among themselves; a round's
        messages are published in the order their sends came, so sequence numbers
        follow it."""
        waiter: asyncio.Future[list[SendResult]] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(incarnation, []).append(_Waiting(messages, at, waiter))
        if incarnation not in self._running:
            self._running[incarnation] = asyncio.create_task(self._run(incarnation))
        return await waiter

    async def _run(self, incarnation: str) -> None:
        """Run the queue's rounds until no send waits. A failed round fails every send
        it carried; a caller that gave up is not answered. Its own task: one caller's
        cancellation stops nobody else's send."""
        sends: list[_Waiting] = []
        try:
            while waiting := self._waiting.pop(incarnation, []):
                sends, later = _apart(waiting)
                if later:
                    self._waiting[incarnation] = later
                try:
                    answers = await self._round(incarnation, sends)
                except Exception as error:
                    for one in sends:
                        if not one.waiter.done():
                            one.waiter.set_exception(error)
                    continue
                for one, answer in zip(sends, answers, strict=True):
                    if not one.waiter.done():
                        one.waiter.set_result(answer)
        finally:
            # No await since the last look: a send arriving now starts a new task.
            del self._running[incarnation]
            for one in [*sends, *self._waiting.pop(incarnation, [])]:
                if not one.waiter.done():
                    one.waiter.set_exception(StoreUnavailable("the send was not published"))

    async def _round(self, incarnation: str, waiting: list[_Waiting]) -> list[list[SendResult]]:
        """Take each deduplication id, publish the messages that took theirs (in order:
        their sequences are their sequence numbers), then record where each id's message
        is, once for the round."""
        sends = [_Send.of(one) for one in waiting]
        name = uuid.uuid4().hex
        taken = await self._take(incarnation, sends, name)
        try:
            keys = await self._backlog.publish_sends(
                incarnation,
                [[entry(s.waiting.messages[i], s.waiting.at) for i in s.fresh] for s in sends],
            )
        except BaseException:
            await self.windows.release([one for _, one in taken])
            raise
        sequences: dict[str, int] = {}
        published = iter(keys)
        for send in sends:
            for i in send.fresh:
                mid = send.waiting.messages[i].id
                sequences[mid] = next(published)
                send.results[i] = SendResult(mid, sequence_number=sequences[mid])
        if taken:
            await self.windows.record(incarnation, name, {mid: sequences[mid] for mid, _ in taken})
        return [send.answers() for send in sends]

    async def _take(
        self, incarnation: str, sends: list[_Send], name: str
    ) -> list[tuple[str, Taken]]:
        """Take the round's ids, all at once: the duplicates' answers go in their sends'
        results, and each send learns which of its messages it publishes. Returns the
        ids taken, with the id of the message that took each."""
        ids = [
            (key, send.waiting.messages[index].id, send.waiting.at)
            for send in sends
            for key, index in send.first.items()
        ]
        outcomes = iter(await self.windows.take(incarnation, ids, name))
        taken: list[tuple[str, Taken]] = []
        for send in sends:
            for index in send.first.values():
                outcome = next(outcomes)
                if isinstance(outcome, SendResult):
                    send.results[index] = outcome
                else:
                    taken.append((send.waiting.messages[index].id, outcome))
            send.fresh = [
                i
                for i, m in enumerate(send.waiting.messages)
                if send.results[i] is None
                and (m.window_key is None or send.first[m.window_key] == i)
            ]
        return taken
