"""Factories for the contract suite: plain functions, no fixture pyramids.

Tests always pass `now=clock.now()` to the store, so every store (the Postgres one
included) runs on the test's fake clock.
"""

from __future__ import annotations

import uuid
from typing import Any

from hopper.core.clock import FakeClock
from hopper.core.ids import new_id
from hopper.core.model import (
    DeadLetterRule,
    Delivery,
    MessageAttribute,
    NewMessage,
    QueueConfig,
    QueueKey,
    Receipt,
    ReceiptResult,
    VisibilityChange,
)
from hopper.core.store import QueueStore

ACCOUNT = "000000000000"


def key(name: str = "q", account: str = ACCOUNT) -> QueueKey:
    return QueueKey(account, name)


def config(**overrides: Any) -> QueueConfig:
    return QueueConfig(**overrides)


def message(body: str = "hello", **overrides: Any) -> NewMessage:
    # The core's own ids (as QueueService gives them): the memory store packs a message
    # only under an id of that form (store/ledger/shelf.py).
    values: dict[str, Any] = {"id": new_id(), "body": body, **overrides}
    return NewMessage(**values)


def fifo_message(group: str, dedup: str | None = None, body: str = "hello") -> NewMessage:
    return message(body, group_id=group, deduplication_id=dedup or str(uuid.uuid4()))


def attributes() -> dict[str, MessageAttribute]:
    return {
        "colour": MessageAttribute("String", string_value="blue"),
        "weight": MessageAttribute("Number.kg", string_value="1.5"),
        "blob": MessageAttribute("Binary", binary_value=b"\x00\x01"),
    }


async def make_queue(
    store: QueueStore, clock: FakeClock, name: str = "q", **overrides: Any
) -> QueueKey:
    queue = key(name)
    if name.endswith(".fifo"):
        overrides.setdefault("fifo", True)
    await store.create_queue(queue, config(**overrides), {}, now=clock.now())
    return queue


async def make_dead_letter_pair(
    store: QueueStore, clock: FakeClock, max_receive_count: int = 2, *, fifo: bool = False
) -> tuple[QueueKey, QueueKey]:
    suffix = ".fifo" if fifo else ""
    target = await make_queue(store, clock, "dlq" + suffix)
    rule = DeadLetterRule(target, max_receive_count)
    source = await make_queue(store, clock, "source" + suffix, dead_letter=rule)
    return source, target


async def send(store: QueueStore, clock: FakeClock, queue: QueueKey, *messages: NewMessage) -> None:
    await store.send(queue, list(messages) or [message()], now=clock.now())


async def receive(
    store: QueueStore, clock: FakeClock, queue: QueueKey, n: int = 10, lease: float = 30.0
) -> list[Delivery]:
    return await store.receive(queue, max_messages=n, visibility_timeout=lease, now=clock.now())


async def receive_one(
    store: QueueStore, clock: FakeClock, queue: QueueKey, lease: float = 30.0
) -> Delivery:
    [delivery] = await receive(store, clock, queue, 1, lease)
    return delivery


async def delete(
    store: QueueStore,
    clock: FakeClock,
    queue: QueueKey,
    receipt: Receipt,
    *,
    refuse_expired: bool = False,
) -> ReceiptResult:
    [result] = await store.delete(
        queue, [receipt], refuse_expired=refuse_expired, now=clock.now()
    )
    return result


async def change(
    store: QueueStore,
    clock: FakeClock,
    queue: QueueKey,
    receipt: Receipt,
    timeout: float,
    *,
    refuse_expired: bool = False,
) -> ReceiptResult:
    [result] = await store.change_visibility(
        queue, [VisibilityChange(receipt, timeout)], refuse_expired=refuse_expired, now=clock.now()
    )
    return result
