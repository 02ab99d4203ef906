"""One queue cannot take the JetStream store down for the others (issue 25, item 1).

Reproduced before: on a server whose max_payload just carries a 1 MiB message, a FIFO
queue filled with long random group and deduplication ids grew its one-entry ledger past
the limit, nats-server closed hopper's connection, and every queue of every account
answered 503. Now a FIFO queue's backlog, deduplication ids and ledger are separate
entries, none of which grows with the queue, and nothing over max_payload is ever
published. JetStream-only: the connection and its limit are this store's.
"""

from __future__ import annotations

import asyncio
import secrets
import shutil
import tempfile
import uuid
from pathlib import Path

import pytest

from hopper.core.clock import SystemClock
from hopper.core.model import NewMessage, QueueConfig, QueueKey
from hopper.store.jetstream import JetStreamQueueStore
from hopper.store.jetstream.fitness import MIN_PAYLOAD

from .servers import new_node

# Random ids of 128 characters (96 bytes of entropy each, which no compression undoes):
# with the id twice per message (the message and the deduplication window) the old
# one-entry ledger passed 2.1 MB around 6,000 messages.
MESSAGES = 9_000


def _ignore(key: QueueKey, count: int | None = None) -> None:
    pass


def _noisy(i: int) -> NewMessage:
    return NewMessage(
        id=str(uuid.uuid4()),
        body=f"n{i}",
        group_id=secrets.token_urlsafe(96),
        deduplication_id=secrets.token_urlsafe(96),
    )


async def _other_queue_round(store: JetStreamQueueStore, key: QueueKey) -> None:
    """A send and a receive + delete on the quiet queue: each must succeed."""
    await store.send(key, [NewMessage(id=str(uuid.uuid4()), body="quiet")], now=None)
    for d in await store.receive(key, max_messages=10, visibility_timeout=30, now=None):
        await store.delete(key, [d.receipt], refuse_expired=False, now=None)


@pytest.mark.slow
async def test_a_fifo_queue_of_long_random_ids_leaves_every_other_queue_served() -> None:
    root = Path(tempfile.mkdtemp(prefix="hopper-nats-"))
    node = new_node("tight", root)
    node.max_payload = MIN_PAYLOAD  # the least hopper accepts
    node.start()
    store = JetStreamQueueStore([node.url], prefix=f"t{uuid.uuid4().hex[:12]}", clock=SystemClock())
    await store.start(_ignore)
    try:
        noisy, quiet = QueueKey("111111111111", "noisy.fifo"), QueueKey("222222222222", "quiet")
        await store.create_queue(noisy, QueueConfig(fifo=True), {}, now=None)
        await store.create_queue(quiet, QueueConfig(), {}, now=None)
        quiet_rounds = 0
        # given a FIFO queue filled with long random ids, while another account's queue works
        for start in range(0, MESSAGES, 100):
            batches = [[_noisy(i) for i in range(j, j + 10)] for j in range(start, start + 100, 10)]
            await asyncio.gather(*(store.send(noisy, b, now=None) for b in batches))
            await _other_queue_round(store, quiet)
            quiet_rounds += 1
        # when it is drained
        received = 0
        while got := await store.receive(noisy, max_messages=10, visibility_timeout=60, now=None):
            received += len(got)
            await store.delete(noisy, [d.receipt for d in got], refuse_expired=False, now=None)
            if received % 500 < 10:
                await _other_queue_round(store, quiet)
                quiet_rounds += 1
        # then it gave every message back, and the other queue was answered throughout
        assert received == MESSAGES
        assert store.unavailable() is None
        assert quiet_rounds >= MESSAGES // 100
    finally:
        await store.close()
        node.stop()
        shutil.rmtree(root, ignore_errors=True)
