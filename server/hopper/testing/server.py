"""HopperServer: the real app (hopper.app) served by uvicorn in a background thread, on
a socket bound before it starts (port 0: a free one, with no race for it)."""

from __future__ import annotations

import asyncio
import threading
from types import TracebackType
from typing import Any

import uvicorn

from hopper import serving
from hopper.app import Assembly, assemble
from hopper.settings import Settings

START_TIMEOUT = 30.0
STOP_TIMEOUT = 15.0


class HopperServer:
    """A hopper server for tests, started by `start()` or `with`:

        with HopperServer() as server:              # in-memory store
            boto3.client("sqs", endpoint_url=server.endpoint_url, ...)

    `database_url` (and `database_schema`) put it on PostgreSQL, migrated at start-up.
    Any other keyword is a `hopper serve` setting (hopper.settings.Settings: `auth`,
    `receipts`, `visibility_floor`, ...). AWS's 60-second rules (no re-creating a queue
    within 60 s of deleting it, one purge per 60 s) are off unless
    `relaxed_timing=False`, since test suites create, delete and purge rapidly."""

    def __init__(
        self,
        *,
        database_url: str | None = None,
        database_schema: str = "hopper",
        host: str = "127.0.0.1",
        port: int = 0,
        relaxed_timing: bool = True,
        **settings: Any,
    ) -> None:
        self.settings = Settings(
            host=host, port=port, database_url=database_url, database_schema=database_schema,
            relaxed_timing=relaxed_timing, **settings,
        )
        self.endpoint_url = ""  # set by start()
        self._assembly: Assembly | None = None
        self._server: serving.Server | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()  # set once started, or once it cannot start
        self._failure: list[str] = []

    def start(self) -> HopperServer:
        """Start serving; returns once the server listens. Raises RuntimeError with the
        reason when it cannot start (a refused declared queue, an unusable database)."""
        if self._thread is not None:
            raise RuntimeError("this HopperServer was started already")
        sock = serving.bind(self.settings.host, self.settings.port)
        self.endpoint_url = serving.url_of(sock, self.settings.host)
        self._assembly = assemble(self.settings)
        app = serving.refusing_in_one_line(self._assembly.app, self._failure.append)
        config = uvicorn.Config(
            app, lifespan="on", ws="none", loop="asyncio", access_log=False,
            # The test suite's logging stays as the suite set it up.
            log_config=None, timeout_graceful_shutdown=int(STOP_TIMEOUT / 2),
        )
        self._server = serving.Server(config, on_started=self._started)
        self._thread = threading.Thread(
            target=self._serve, args=(sock,), name=f"hopper {self.endpoint_url}", daemon=True
        )
        self._thread.start()
        if not self._ready.wait(START_TIMEOUT):
            raise RuntimeError(f"hopper did not start within {START_TIMEOUT} s")
        if self._loop is None:
            self._thread.join(STOP_TIMEOUT)
            reason = self._failure[0] if self._failure else "see the log above"
            raise RuntimeError(f"hopper could not start: {reason}")
        return self

    def reset(self) -> None:
        """Empty the server: delete every queue of every account, with its messages,
        and every SNS topic with its subscriptions (on PostgreSQL too). Long polls
        waiting on a queue end with QueueDoesNotExist."""
        self._run(self._delete_all_queues())
        self._run(self._delete_all_topics())

    def sent(self) -> list[Any]:
        """What SNS would have sent to subscribers it does not reach (email, SMS,
        application, Lambda, Firehose), oldest first: `hopper.sns.model.Sent` values."""
        assert self._assembly is not None and self._assembly.sns is not None
        return list(self._assembly.sns.parts.deliveries.recorded)

    def stop(self) -> None:
        """Answer waiting long polls, finish the requests in progress, stop serving."""
        if self._server is None or self._thread is None:
            return
        if self._loop is not None and self._assembly is not None:
            self._loop.call_soon_threadsafe(self._assembly.service.drain)
        self._server.should_exit = True
        self._thread.join(STOP_TIMEOUT)
        if self._thread.is_alive():
            raise RuntimeError(f"hopper did not stop within {STOP_TIMEOUT} s")
        self._server = None

    def __enter__(self) -> HopperServer:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()

    def _serve(self, sock: Any) -> None:
        assert self._server is not None
        try:
            with sock:
                self._server.run(sockets=[sock])
        except BaseException as error:  # SystemExit too: start() says it
            self._failure.append(f"{type(error).__name__}: {error}")
        finally:
            self._ready.set()

    def _started(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._ready.set()

    async def _delete_all_queues(self) -> None:
        assert self._assembly is not None
        service = self._assembly.service
        keys = [record.key async for record in service.all_queues()]
        for key in keys:
            await service.delete_queue(key)

    async def _delete_all_topics(self) -> None:
        assert self._assembly is not None
        if self._assembly.sns is None:
            return
        store = self._assembly.sns.store
        while topics := await store.list_topics("arn:", after=None, limit=1000):
            for topic in topics:
                await store.delete_topic(topic.arn)
        self._assembly.sns.parts.deliveries.recorded.clear()

    def _run(self, work: Any) -> Any:
        """Run the coroutine `work` on the server's loop and wait for its result."""
        if self._loop is None or self._server is None:
            work.close()
            raise RuntimeError("the HopperServer is not running")
        return asyncio.run_coroutine_threadsafe(work, self._loop).result(STOP_TIMEOUT)
