"""Cross-process wake-ups: one LISTEN connection per process, and coalesced NOTIFYs.

A notification is a hint ("messages of this queue may be receivable"), never a
message: a lost one costs a waiter latency, because waiters also poll. So sends never
notify inside their own transaction (a measured trap: notifying commits queue behind
one lock and cut inserts from 8,700/s to 2,100/s); `Listener.poke` collects queues and
flushes them a few milliseconds later, all in one statement, on the listening
connection, which no request ever waits for.

Payloads are `<instance> <account>/<name>[ <count>]`: a process ignores its own
notifications, since the service wakes same-process waiters directly. The count is how
many messages became receivable, so that a receiving process wakes that many of its
waiters instead of all of them (see core/wakeups.py); without one, every waiter looks.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Awaitable, Callable

import asyncpg

from hopper.core.model import QueueKey
from hopper.store.postgres.failures import DATABASE_ERRORS

CHANNEL = "hopper_wakeup"

log = logging.getLogger(__name__)

Connect = Callable[[], Awaitable[asyncpg.Connection]]


def payload(instance: str, key: QueueKey, count: int | None = None) -> str:
    text = f"{instance} {key.account}/{key.name}"
    return text if count is None else f"{text} {count}"


def parse(text: str) -> tuple[str, QueueKey, int | None] | None:
    """(instance, key, count) of a payload, or None when it is not one of ours."""
    instance, _, rest = text.partition(" ")
    queue, _, count = rest.partition(" ")
    account, slash, name = queue.partition("/")
    if not slash or not account or not name or (count and not count.isdigit()):
        return None
    return instance, QueueKey(account, name), int(count) if count else None


class Listener:
    """Keeps one LISTEN connection open for the life of the process.

    `on_wake(key, count)` is called for every notification from another instance.
    `on_reconnect()` is awaited after the connection was lost and opened again:
    notifications sent meanwhile are gone, so it should wake every waiter.
    """

    def __init__(
        self,
        connect: Connect,
        on_wake: Callable[[QueueKey, int | None], None],
        on_reconnect: Callable[[], Awaitable[None]],
        *,
        notify_sql: str,
        flush_delay: float = 0.005,
        health_interval: float = 5.0,
        backoff: tuple[float, float] = (0.05, 5.0),
    ) -> None:
        self.instance = uuid.uuid4().hex[:12]
        self._connect = connect
        self._on_wake = on_wake
        self._on_reconnect = on_reconnect
        self._notify_sql = notify_sql
        self._flush_delay = flush_delay
        self._health_interval = health_interval
        self._backoff = backoff
        self._connection: asyncpg.Connection | None = None
        self._pending: dict[QueueKey, int | None] = {}
        self._flusher: asyncio.Task[None] | None = None
        self._runner: asyncio.Task[None] | None = None
        self._lost = asyncio.Event()
        # One connection, two users (pings and flushes): asyncpg runs one query at a time.
        self._using = asyncio.Lock()
        # Set each time a connection is listening: tests await it instead of sleeping.
        self.listening = asyncio.Event()
        self.reconnects = 0

    async def start(self) -> None:
        """Open and LISTEN now (so a failure to connect is the caller's), then keep the
        connection up in the background."""
        await self._listen()
        self._runner = asyncio.create_task(self._keep_listening(), name="hopper-listener")

    async def close(self) -> None:
        for task in (self._runner, self._flusher):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._runner = self._flusher = None
        await self._drop_connection()

    def server_pid(self) -> int | None:
        """The backend process id of the listening connection (None while reconnecting)."""
        return None if self._connection is None else int(self._connection.get_server_pid())

    def poke(self, key: QueueKey, count: int | None = None) -> None:
        """Tell other processes, soon and coalesced, that `key` has `count` new
        receivable messages (None: something changed, every waiter should look)."""
        if key in self._pending:
            pending = self._pending[key]
            count = None if pending is None or count is None else pending + count
        self._pending[key] = count
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush(), name="hopper-notify")

    # --- the connection -------------------------------------------------------------

    async def _listen(self) -> None:
        connection = await self._connect()
        self._lost.clear()
        connection.add_termination_listener(self._on_terminated)
        await connection.add_listener(CHANNEL, self._on_notification)
        self._connection = connection
        self.listening.set()

    async def _keep_listening(self) -> None:
        while True:
            await self._wait_until_lost()
            self.listening.clear()
            await self._drop_connection()
            await self._reconnect()
            self.reconnects += 1
            await self._on_reconnect()

    async def _wait_until_lost(self) -> None:
        """Return when the connection is gone: closed by the server, or failing a ping
        (a dead network can keep a socket looking open)."""
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._health_interval):
                    await self._lost.wait()
                    return
            if not await self._alive():
                return

    async def _alive(self) -> bool:
        connection = self._connection
        if connection is None or connection.is_closed():
            return False
        try:
            async with self._using, asyncio.timeout(self._health_interval):
                await connection.fetchval("SELECT 1")
        except DATABASE_ERRORS:
            return False
        return True

    async def _reconnect(self) -> None:
        delay, limit = self._backoff
        while True:
            try:
                await self._listen()
                return
            except DATABASE_ERRORS:
                log.warning("LISTEN connection lost; retrying in %.2fs", delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, limit)

    async def _drop_connection(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None and not connection.is_closed():
            connection.terminate()

    def _on_terminated(self, connection: object) -> None:
        self._lost.set()

    def _on_notification(
        self, connection: object, pid: int, channel: str, text: object
    ) -> None:
        parsed = parse(str(text))
        if parsed is not None and parsed[0] != self.instance:
            self._on_wake(parsed[1], parsed[2])

    # --- sending --------------------------------------------------------------------

    async def _flush(self) -> None:
        # Pokes arriving while a flush is sent are picked up by the next round.
        while self._pending:
            await asyncio.sleep(self._flush_delay)  # the coalescing window
            pending, self._pending = self._pending, {}
            await self._send([payload(self.instance, k, n) for k, n in pending.items()])

    async def _send(self, payloads: list[str]) -> None:
        connection = self._connection
        if connection is None:
            return  # a hint lost while reconnecting; the other side's waiters poll
        try:
            async with self._using:
                await connection.execute(self._notify_sql, CHANNEL, payloads)
        except DATABASE_ERRORS:
            self._lost.set()
