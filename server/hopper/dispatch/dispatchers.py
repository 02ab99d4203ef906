"""The dispatchers of one hopper process: a look at the queues every second, a
QueueDispatch running for each queue with an active Hopper.Dispatch target, restarted
when its target changes and stopped when it is removed, paused or its queue deleted.
Every process runs them; the store's dispatch slots keep each queue's calls in flight
within its maxConcurrency whatever the number of processes."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid

from hopper.core.dispatch_targets import DispatchTarget
from hopper.core.errors import StoreUnavailable
from hopper.core.model import QueueKey
from hopper.core.service import QueueService
from hopper.dispatch.queue import DispatchEvents, QueueDispatch
from hopper.wire.context import RequestContext

log = logging.getLogger("hopper.dispatch")

SCAN_SECONDS = 1.0


class _Quiet:
    def called(self, key: QueueKey, outcome: str, seconds: float, messages: int) -> None:
        pass

    def retried(self, key: QueueKey, messages: int) -> None:
        pass


class Dispatchers:
    def __init__(
        self,
        service: QueueService,
        *,
        region: str,
        base_url: str,
        events: DispatchEvents | None = None,
    ) -> None:
        self.service = service
        self.events = events or _Quiet()
        # What the payloads' ARNs and receipt handles are built with (no request here).
        self.ctx = RequestContext(
            protocol="json", account="", region=region, base_url=base_url,
            path_queue=None, trace_header=None, request_id="", home_region=region,
        )
        self.holder = uuid.uuid4().hex
        self.running: dict[QueueKey, tuple[DispatchTarget, asyncio.Task[None]]] = {}

    async def run(self) -> None:
        """Look at the queues every SCAN_SECONDS until cancelled; then stop them all."""
        try:
            while True:
                try:
                    await self.scan()
                except StoreUnavailable as error:
                    log.warning("dispatchers could not list the queues: %s", error)
                await asyncio.sleep(SCAN_SECONDS)
        finally:
            await self.stop_all()

    async def scan(self) -> None:
        wanted: dict[QueueKey, DispatchTarget] = {}
        async for record in self.service.all_queues():
            target = record.config.dispatch
            if target is not None and not target.paused:
                wanted[record.key] = target
        for key, (target, task) in list(self.running.items()):
            if wanted.get(key) != target or task.done():
                await self._stop(key)
        for key, target in wanted.items():
            if key not in self.running:
                self._start(key, target)

    def _start(self, key: QueueKey, target: DispatchTarget) -> None:
        dispatch = QueueDispatch(self.service, key, target, self.ctx, self.events, self.holder)
        task = asyncio.create_task(dispatch.run(), name=f"hopper-dispatch-{key.name}")
        self.running[key] = (target, task)

    async def _stop(self, key: QueueKey) -> None:
        _, task = self.running.pop(key)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task

    async def stop_all(self) -> None:
        for key in list(self.running):
            await self._stop(key)
