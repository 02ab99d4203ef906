"""Wake-ups across processes: only Postgres has other processes to hear from.

Two store instances over one database stand for two server processes.
"""

from __future__ import annotations

import uuid

import asyncpg

from hopper.core.model import NewMessage, QueueConfig, QueueKey, VisibilityChange

from .conftest import StoreOpener, Wakes

QUEUE = QueueKey("000000000000", "q")


def message(body: str = "x") -> NewMessage:
    return NewMessage(id=str(uuid.uuid4()), body=body)


async def test_a_send_through_one_process_wakes_the_other(open_store: StoreOpener) -> None:
    wakes = Wakes()
    async with open_store() as sender, open_store(wakes):
        await sender.create_queue(QUEUE, QueueConfig(), {}, now=None)
        await sender.send(QUEUE, [message()], now=None)
        assert await wakes.next() == QUEUE


async def test_a_process_is_not_woken_by_its_own_sends(open_store: StoreOpener) -> None:
    # Same-process waiters are woken by the service directly; the echo would be noise.
    own, other = Wakes(), Wakes()
    async with open_store(own) as sender, open_store(other):
        await sender.create_queue(QUEUE, QueueConfig(), {}, now=None)
        await sender.send(QUEUE, [message()], now=None)
        assert await other.next() == QUEUE  # the notification has been delivered...
        assert own.keys.empty()  # ...and the sender ignored its own


async def test_many_sends_coalesce_into_few_notifications(open_store: StoreOpener) -> None:
    wakes = Wakes()
    async with open_store(notify_delay=0.05) as sender, open_store(wakes):
        await sender.create_queue(QUEUE, QueueConfig(), {}, now=None)
        for _ in range(20):
            await sender.send(QUEUE, [message()], now=None)
        assert await wakes.next() == QUEUE
        assert wakes.keys.qsize() < 19


async def test_a_notification_counts_the_messages_made_receivable(
    open_store: StoreOpener,
) -> None:
    # The receiving process wakes that many waiters, not all of them (core/wakeups.py).
    wakes = Wakes()
    # a coalescing window wide enough that both sends fall in it on a loaded machine
    async with open_store(notify_delay=0.5) as sender, open_store(wakes):
        await sender.create_queue(QUEUE, QueueConfig(), {}, now=None)
        await sender.send(QUEUE, [message(), message(), message()], now=None)
        await sender.send(QUEUE, [message()], now=None)
        assert await wakes.next() == QUEUE
        assert wakes.counts == [4]


async def test_delayed_messages_alone_wake_every_waiter_to_reread_deadlines(
    open_store: StoreOpener,
) -> None:
    wakes = Wakes()
    async with open_store() as sender, open_store(wakes):
        await sender.create_queue(QUEUE, QueueConfig(), {}, now=None)
        delayed = NewMessage(id=str(uuid.uuid4()), body="later", delay=30)
        await sender.send(QUEUE, [delayed], now=None)
        assert await wakes.next() == QUEUE
        assert wakes.counts == [None]


async def test_the_listener_reconnects_after_its_backend_is_terminated(
    open_store: StoreOpener, database: str
) -> None:
    wakes = Wakes()
    async with open_store() as sender, open_store(wakes) as receiver:
        await sender.create_queue(QUEUE, QueueConfig(), {}, now=None)
        assert receiver.listener is not None
        pid = receiver.listener.server_pid()
        admin = await asyncpg.connect(database)
        try:
            assert await admin.fetchval("SELECT pg_terminate_backend($1)", pid)
        finally:
            await admin.close()
        # Notifications may have been lost while it was down: every queue is woken...
        assert await wakes.next() == QUEUE
        assert receiver.listener.server_pid() != pid
        wakes.clear()
        # ...and a send after the drop is heard on the new connection.
        await sender.send(QUEUE, [message()], now=None)
        assert await wakes.next() == QUEUE


async def test_a_lease_cut_short_in_one_process_wakes_the_other(open_store: StoreOpener) -> None:
    wakes = Wakes()
    async with open_store() as worker, open_store(wakes):
        await worker.create_queue(QUEUE, QueueConfig(), {}, now=None)
        await worker.send(QUEUE, [message()], now=None)
        assert await wakes.next() == QUEUE
        [delivery] = await worker.receive(QUEUE, max_messages=1, visibility_timeout=600, now=None)
        await worker.change_visibility(
            QUEUE, [VisibilityChange(delivery.receipt, 0)], refuse_expired=False, now=None
        )
        assert await wakes.next() == QUEUE
