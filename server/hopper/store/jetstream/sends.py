"""Sends that go to a queue's backlog (see `backlog.py`): every send to a standard
queue without deduplication id, lease or depth ceiling, and every FIFO send without a
depth ceiling, whose deduplication ids are decided one entry each (`deduplication.py`).
Sends with a live deduplication key, a lease or a ceiling need the queue's ledger and
go through a step."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Sequence

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


async def send_fifo(
    backlog: Backlog,
    windows: Windows,
    incarnation: str,
    messages: Sequence[NewMessage],
    at: float,
) -> list[SendResult]:
    """Take each deduplication id, publish the messages that took theirs (in order:
    their sequences are their sequence numbers), then record where each id's message
    is. A later message of the batch with an earlier one's id is its duplicate."""
    first: dict[str, int] = {}
    for index, message in enumerate(messages):
        if message.window_key is not None:
            first.setdefault(message.window_key, index)
    send = uuid.uuid4().hex
    takes = await windows.take(
        incarnation, [(k, messages[i].id) for k, i in first.items()], send, at
    )
    results: list[SendResult | None] = [None] * len(messages)
    taken: list[tuple[int, Taken]] = []
    for index, outcome in zip(first.values(), takes, strict=True):
        if isinstance(outcome, SendResult):
            results[index] = outcome
        else:
            taken.append((index, outcome))
    fresh = [
        i
        for i, m in enumerate(messages)
        if results[i] is None and (m.window_key is None or first[m.window_key] == i)
    ]
    try:
        seqs = await backlog.publish(incarnation, [entry(messages[i], at) for i in fresh])
    except BaseException:
        await windows.release([one for _, one in taken])
        raise
    for index, seq in zip(fresh, seqs, strict=True):
        results[index] = SendResult(messages[index].id, sequence_number=seq)
    if taken:
        where = dict(zip(fresh, seqs, strict=True))
        await windows.record(incarnation, send, {messages[i].id: where[i] for i, _ in taken})
    return [
        result
        if result is not None
        else dataclasses.replace(
            results[first[str(m.window_key)]] or SendResult(m.id), duplicate=True
        )
        for m, result in zip(messages, results, strict=True)
    ]
