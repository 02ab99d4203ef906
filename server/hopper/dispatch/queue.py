"""One queue's dispatch: up to maxConcurrency workers, each holding a dispatch slot
(store-wide, so the bound holds across processes), receiving through the core as any
client does (leases, fencing tokens, receive counts), POSTing the batch and settling
it: successes deleted, failures released with their error to the retry policy."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence
from typing import Protocol

from hopper.core.dispatch_targets import DispatchTarget
from hopper.core.errors import QueueError, StoreUnavailable
from hopper.core.model import Delivery, QueueKey, VisibilityChange
from hopper.core.service import QueueService
from hopper.core.store import QueueStore
from hopper.dispatch import payloads
from hopper.dispatch.calls import Outcome, post
from hopper.dispatch.connections import Connection
from hopper.wire.context import RequestContext

log = logging.getLogger("hopper.dispatch")

# How long one receive of a worker waits for messages (a long poll; the core wakes it
# at a send), and how long a worker that found every slot held waits to look again.
WAIT_SECONDS = 5.0
SLOT_WAIT_SECONDS = 1.0
# Beyond the batching window and the call's timeout: what a lease (of the messages, and
# of the slot) allows for the receive and the settling.
SLACK_SECONDS = 5.0


class DispatchEvents(Protocol):
    def called(self, key: QueueKey, outcome: str, seconds: float, messages: int) -> None:
        """One call ended with `outcome` (Outcome.label) after `seconds`."""

    def retried(self, key: QueueKey, messages: int) -> None:
        """`messages` failed and were released to the queue's retry policy."""


class QueueDispatch:
    def __init__(
        self,
        service: QueueService,
        key: QueueKey,
        target: DispatchTarget,
        ctx: RequestContext,
        events: DispatchEvents,
        holder: str,
    ) -> None:
        self.service = service
        self.key = key
        self.target = target
        self.ctx = ctx
        self.events = events
        self.holder = holder
        # A raw batch is called one message after the other: its lease covers them all.
        calls = target.batch_size if target.payload == "raw" else 1
        self.lease = target.batch_window + calls * target.timeout + SLACK_SECONDS
        self.slot_lease = self.lease + WAIT_SECONDS
        # Workers without a slot look for one a single one at a time, and not again for
        # SLOT_WAIT_SECONDS once every slot was found held: a process's idle workers
        # cost the store one statement a second, not one each.
        self._seeking = asyncio.Lock()
        self._all_held_until = 0.0

    @property
    def store(self) -> QueueStore:
        return self.service.store

    async def run(self) -> None:
        """Run the workers until cancelled."""
        workers = range(self.target.max_concurrency)
        await asyncio.gather(*(self._worker(f"{self.holder}/{i}") for i in workers))

    async def _worker(self, holder: str) -> None:
        slot: int | None = None
        renewed = 0.0
        # Each worker keeps its own connection: one call at a time on it.
        client = Connection(self.target.url)
        try:
            while True:
                if slot is None:
                    slot = await self._seek_slot(holder)
                    renewed = time.monotonic()
                elif time.monotonic() - renewed > self.slot_lease / 2:
                    slot = await self._take_slot(holder)
                    renewed = time.monotonic()
                if slot is None:  # every slot is held (by other processes' workers too)
                    await asyncio.sleep(SLOT_WAIT_SECONDS)
                    continue
                await self._round(client)
        finally:
            client.close()
            if slot is not None:
                await self._give_back(holder, slot)

    async def _seek_slot(self, holder: str) -> int | None:
        async with self._seeking:
            if time.monotonic() < self._all_held_until:
                return None
            slot = await self._take_slot(holder)
            if slot is None:
                self._all_held_until = time.monotonic() + SLOT_WAIT_SECONDS
            return slot

    async def _take_slot(self, holder: str) -> int | None:
        """The holder's slot renewed, or a free one; None when all are held."""
        try:
            return await self.store.take_dispatch_slot(
                self.key,
                holder=holder,
                slots=self.target.max_concurrency,
                lease=self.slot_lease,
                now=self.service.clock.now(),
            )
        except StoreUnavailable:
            return None

    async def _give_back(self, holder: str, slot: int) -> None:
        # Failing that, its lease runs out instead.
        with contextlib.suppress(StoreUnavailable, asyncio.CancelledError):
            await self.store.give_back_dispatch_slot(self.key, holder=holder, slot=slot)

    async def _round(self, client: Connection) -> None:
        """Gather a batch, call the target with it, settle it. A store fault or a queue
        gone pauses the worker for a moment (the dispatchers stop it if it is gone)."""
        try:
            batch = await self._gather()
            if batch:
                await self._deliver(client, batch)
        except (QueueError, StoreUnavailable) as error:
            log.warning("dispatch of %s paused: %s", self.key.name, error)
            await asyncio.sleep(SLOT_WAIT_SECONDS)
        except Exception:
            # Never a dead worker holding its slot: what it held comes back by lease.
            log.exception("dispatch of %s failed; going on", self.key.name)
            await asyncio.sleep(SLOT_WAIT_SECONDS)

    async def _gather(self) -> list[Delivery]:
        """Up to batchSize messages: the first receive waits for any, then more are
        gathered until the batching window closes."""
        target = self.target
        batch = await self._receive(target.batch_size, WAIT_SECONDS)
        if not batch or target.batch_window <= 0:
            return batch
        closes = time.monotonic() + target.batch_window
        while len(batch) < target.batch_size and (left := closes - time.monotonic()) > 0:
            batch += await self._receive(target.batch_size - len(batch), min(left, 20.0))
        return batch

    async def _receive(self, count: int, wait: float) -> list[Delivery]:
        return await self.service.receive(
            self.key, max_messages=count, visibility_timeout=self.lease, wait_time=wait
        )

    async def _deliver(self, client: Connection, batch: list[Delivery]) -> None:
        if self.target.payload == "raw":
            for delivery in batch:
                await self._call(client, [delivery])
        else:
            await self._call(client, batch)

    async def _call(self, client: Connection, batch: list[Delivery]) -> None:
        target = self.target
        if target.payload == "raw":
            body = batch[0].message.body.encode()
            headers = payloads.raw_headers(self.ctx, self.key, batch[0])
        else:
            body = payloads.lambda_event(self.ctx, self.key, batch)
            headers = {"content-type": "application/json"}
        started = time.monotonic()
        outcome = await post(client, body, headers, target.timeout, batch)
        self.events.called(self.key, outcome.label, time.monotonic() - started, len(batch))
        await self._settle(batch, outcome)

    async def _settle(self, batch: Sequence[Delivery], outcome: Outcome) -> None:
        failed = _held_back(self.key, batch, outcome.failed)
        done = [d.receipt for d in batch if d.message.id not in failed]
        if done:
            await self.service.delete_batch(self.key, done)
        released = [
            VisibilityChange(d.receipt, 0, error=outcome.error)
            for d in batch
            if d.message.id in failed
        ]
        if released:
            await self.service.change_visibility_batch(self.key, released)
            self.events.retried(self.key, len(released))


def _held_back(key: QueueKey, batch: Sequence[Delivery], failed: frozenset[str]) -> set[str]:
    """The messages not to delete: the failed ones and, on a FIFO queue, every later
    message of a group with a failure (deleting them would let them overtake it)."""
    held = set(failed)
    if key.is_fifo:
        broken: set[str | None] = set()
        for delivery in batch:
            group = delivery.message.group_id
            if delivery.message.id in failed:
                broken.add(group)
            elif group in broken:
                held.add(delivery.message.id)
    return held
