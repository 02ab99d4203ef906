"""The JetStream store's edge: the connection, the stream and buckets it needs, and the
one place nats-py's exceptions become hopper's `StoreUnavailable`."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import nats
import nats.errors
import nats.js.errors
import orjson
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import (
    AckPolicy,
    ConsumerConfig,
    DeliverPolicy,
    KeyValueConfig,
    StorageType,
    StreamConfig,
)
from nats.js.kv import KeyValue

from hopper.core.errors import StoreUnavailable
from hopper.store.jetstream import fitness

log = logging.getLogger("hopper.jetstream")

# Bodies outlive the longest retention (14 days): a body is deleted with its message; this
# only bounds bodies orphaned by a process that died between publishing and committing.
BODY_MAX_AGE_SECONDS = 15 * 24 * 3600.0


# How long the server keeps a FIFO deduplication id (its window is 300 s).
DEDUP_KEEP_SECONDS = 900.0

# How long one JetStream request may take: a request to a node that just died waits this
# long before its step answers ServiceUnavailable (and an SDK retries).
REQUEST_TIMEOUT_SECONDS = 3.0
# Connection attempts per server at start-up.
START_ATTEMPTS = 3
# How long a scan waits for the next entries before calling JetStream lost, and how
# many it asks for at once.
SCAN_TIMEOUT_SECONDS = 5.0
SCAN_BATCH = 256


class Conflict(Exception):
    """A compare-and-set lost: the entry changed since it was read."""


@dataclass
class Bucket:
    """A key-value bucket, with what writing to it by hand needs."""

    kv: KeyValue
    js: JetStreamContext
    name: str


@dataclass
class Resources:
    """What one store prefix owns in JetStream."""

    nc: Client
    js: JetStreamContext
    queues: Bucket  # queue records, deletion times, move tasks
    ledgers: Bucket  # one ledger per queue incarnation
    dedup: Bucket  # FIFO deduplication ids, one entry each (deduplication.py)
    body_stream: str
    body_subject: str
    log: ConnectionLog

    def backlog_subject(self, incarnation: str) -> str:
        """Where a queue's plain sends wait to be absorbed (see `backlog.py`)."""
        return f"{self.body_subject}.{incarnation}"

    def wake_subject(self, incarnation: str) -> str:
        return f"{self.body_subject[: -len('.bodies')]}.wake.{incarnation}"


async def connect(
    urls: Sequence[str],
    *,
    replicas: int,
    prefix: str,
    closed: Callable[[], Awaitable[None]] | None = None,
) -> Resources:
    """Connect and create (or find) the stream and buckets. Raises StoreUnavailable when
    JetStream cannot be reached, refuses, or cannot carry what SQS allows (fitness.py).
    `closed` is called when the connection closes for good (nats-py gives up on a
    connection the server closed with an error, e.g. a payload over its limit)."""
    logged = ConnectionLog()
    try:
        nc = await nats.connect(
            servers=list(urls),
            connect_timeout=2,
            # At start-up: a few tries per server, then a clear failure.
            max_reconnect_attempts=START_ATTEMPTS,
            reconnect_time_wait=0.25,
            # Failures at start-up are the one line the caller writes; later ones are logged.
            error_cb=logged.error,
            disconnected_cb=logged.disconnected,
            closed_cb=closed,
        )
    except (TimeoutError, nats.errors.Error, OSError) as error:
        raise StoreUnavailable(f"unreachable ({type(error).__name__}: {error})") from error
    problem = fitness.unfit(nc._server_info)
    if problem is not None:
        await nc.close()
        raise StoreUnavailable(problem)
    # Once running, never give up: requests answer ServiceUnavailable until it is back.
    nc.options["max_reconnect_attempts"] = -1
    logged.started = True
    with translated():
        js = nc.jetstream(timeout=REQUEST_TIMEOUT_SECONDS)
        body_stream = f"{prefix.upper()}_BODIES"
        body_subject = f"{prefix}.bodies"
        await js.add_stream(
            StreamConfig(
                name=body_stream,
                # The bodies a ledger names, and one backlog subject per queue.
                subjects=[body_subject, f"{body_subject}.*"],
                storage=StorageType.FILE,
                num_replicas=replicas,
                max_age=BODY_MAX_AGE_SECONDS,
                # Batched direct gets read a backlog's head in one request.
                allow_direct=True,
            )
        )
        queues = await _bucket(js, f"{prefix}_queues", replicas)
        ledgers = await _bucket(js, f"{prefix}_ledgers", replicas)
        # An id's window is 300 s of hopper's clock; the server drops entries well after.
        dedup = await _bucket(js, f"{prefix}_dedup", replicas, ttl=DEDUP_KEEP_SECONDS)
    return Resources(nc, js, queues, ledgers, dedup, body_stream, body_subject, logged)


async def _bucket(
    js: JetStreamContext, name: str, replicas: int, ttl: float | None = None
) -> Bucket:
    # history=1: a value's revision is all compare-and-set needs. No direct gets: a
    # follower may answer those from behind, and a decision that writes nothing (a
    # receipt found gone, an empty receive) must not rest on an old ledger.
    kv = await js.create_key_value(
        KeyValueConfig(
            bucket=name,
            history=1,
            replicas=replicas,
            storage=StorageType.FILE,
            direct=False,
            ttl=ttl,
        )
    )
    return Bucket(kv, js, name)


class ConnectionLog:
    """The connection's callbacks: quiet until the store has started, and once it is
    closing."""

    started = False

    async def error(self, error: Exception) -> None:
        if self.started:
            log.warning("hopper: JetStream connection: %s", error)

    async def disconnected(self) -> None:
        if self.started:
            log.warning("hopper: JetStream disconnected; reconnecting")


@contextmanager
def translated() -> Iterator[None]:
    """No nats-py exception leaves the store: a lost compare-and-set is a Conflict, every
    other failure a StoreUnavailable (retryable by SDKs)."""
    try:
        yield
    except nats.js.errors.KeyWrongLastSequenceError as error:
        raise Conflict() from error
    except nats.js.errors.APIError as error:
        if error.err_code in (10071, 10164):  # wrong last sequence (a CAS on a key)
            raise Conflict() from error
        raise StoreUnavailable(f"JetStream: {error}") from error
    except (TimeoutError, nats.errors.Error, OSError) as error:
        raise StoreUnavailable(f"JetStream: {type(error).__name__} {error}".strip()) from error


async def get(bucket: Bucket, key: str) -> tuple[bytes | None, int]:
    """The value and revision of `key`, or (None, revision of its tombstone or 0)."""
    with translated():
        try:
            entry = await bucket.kv.get(key)
        except nats.js.errors.KeyNotFoundError as error:
            # A deleted key's tombstone has a revision a re-create must name.
            tombstone = getattr(error, "entry", None)
            return None, tombstone.revision or 0 if tombstone is not None else 0
    return entry.value, entry.revision or 0


async def put(bucket: Bucket, key: str, value: bytes, last: int) -> int:
    """Write `value` if `key` is still at revision `last` (0: absent); the new revision.
    Raises Conflict."""
    return await _write(bucket, key, value, last, {})


async def remove(bucket: Bucket, key: str, last: int) -> None:
    """Delete `key` if still at revision `last`. Raises Conflict."""
    await _write(bucket, key, b"", last, {"KV-Operation": "DEL"})


async def _write(bucket: Bucket, key: str, value: bytes, last: int, headers: dict[str, str]) -> int:
    """Compare-and-set on the key's last sequence. (nats-server before 2.9.21 let two
    writers from one revision both win on a replicated stream, nats-io/nats-server#4320;
    hopper requires 2.11, see fitness.py, so the server's own check is enough.)"""
    fits(bucket.js, value)
    headers = {**headers, "Nats-Expected-Last-Subject-Sequence": str(last)}
    # A request and its answer read here, not nats-py's JetStream publish: that reads
    # the acknowledgement with the standard library's JSON into an API object (5 us a
    # write, against 0.3 with orjson; its headers and checks besides).
    with translated():
        msg = await bucket.js._nc.request(
            f"$KV.{bucket.name}.{key}", value, timeout=REQUEST_TIMEOUT_SECONDS, headers=headers
        )
    return _acknowledged(msg.data)


def _acknowledged(data: bytes) -> int:
    """The sequence a JetStream publish was stored at; Conflict for a lost
    compare-and-set."""
    answer = orjson.loads(data)
    error = answer.get("error")
    if error is None:
        return int(answer["seq"])
    if error.get("err_code") in (10071, 10164):  # wrong last sequence
        raise Conflict()
    raise StoreUnavailable(f"JetStream: {error.get('description', error)}")


async def create_many(bucket: Bucket, entries: Sequence[tuple[str, bytes]]) -> list[int | None]:
    """Create each (key, value) where the key has no value, all at once: the revision of
    each created, None where the key has one (a lost compare-and-set). One subscription
    gathers every answer, rather than a request (a future, a timer, a task) each."""
    if len(entries) < 2:  # a subscription of its own costs more than one request
        return [await _create_one(bucket, key, value) for key, value in entries]
    nc = bucket.js._nc
    inbox = nc.new_inbox()
    answers: dict[int, bytes] = {}
    complete: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    async def answered(msg: Msg) -> None:
        answers[int(msg.subject.rsplit(".", 1)[1])] = msg.data
        if len(answers) == len(entries) and not complete.done():
            complete.set_result(None)

    with translated():
        sub = await nc.subscribe(f"{inbox}.*", cb=answered)
        try:
            for index, (key, value) in enumerate(entries):
                fits(bucket.js, value)
                await nc.publish(
                    f"$KV.{bucket.name}.{key}",
                    value,
                    reply=f"{inbox}.{index}",
                    headers={"Nats-Expected-Last-Subject-Sequence": "0"},
                )
            await asyncio.wait_for(complete, REQUEST_TIMEOUT_SECONDS)
        finally:
            await sub.unsubscribe()
    return [_created(answers[index]) for index in range(len(entries))]


async def _create_one(bucket: Bucket, key: str, value: bytes) -> int | None:
    try:
        return await put(bucket, key, value, 0)
    except Conflict:
        return None


def _created(data: bytes) -> int | None:
    answer = orjson.loads(data)
    error = answer.get("error")
    if error is None:
        return int(answer["seq"])
    if error.get("err_code") in (10071, 10164):  # wrong last sequence: the key has a value
        return None
    raise StoreUnavailable(f"JetStream: {error.get('description', error)}")


async def put_unacknowledged(bucket: Bucket, key: str, value: bytes, last: int) -> None:
    """`put` without waiting for JetStream's answer (nor learning of a lost
    compare-and-set): for a write whose loss only costs a later wait (deduplication.py)."""
    fits(bucket.js, value)
    headers = {"Nats-Expected-Last-Subject-Sequence": str(last)}
    with translated():
        await bucket.js._nc.publish(f"$KV.{bucket.name}.{key}", value, headers=headers)


async def delete_message(res: Resources, seq: int) -> None:
    """Delete one message of the bodies stream without erasing it on disk: nats-py's
    `delete_msg` asks for a secure erase (the message overwritten in its block), which
    made a batch of deletes take 100 ms under load instead of a fraction of one."""
    request = orjson.dumps({"seq": seq, "no_erase": True})
    with translated():
        answer = await res.nc.request(
            f"$JS.API.STREAM.MSG.DELETE.{res.body_stream}", request, timeout=REQUEST_TIMEOUT_SECONDS
        )
    error = orjson.loads(answer.data).get("error")
    if error is not None and error.get("err_code") != NO_MESSAGE:
        raise StoreUnavailable(f"JetStream: {error.get('description', error)}")


# JetStream's error code for a message already gone (deleted or purged): what a delete wants.
NO_MESSAGE = 10057

# What a publish's headers may take beyond its payload, at most (hopper's own headers).
HEADER_ROOM = 1024


def fits(js: JetStreamContext, payload: bytes) -> None:
    """Refuse a publish the server would refuse by closing the connection: nats-py
    checks the payload against max_payload but not the headers, and a server sent
    more than its max_payload closes the connection (every queue would stop)."""
    limit = js._nc.max_payload
    if len(payload) + HEADER_ROOM > limit:
        raise StoreUnavailable(
            f"JetStream: {len(payload)} bytes to write, more than the server's max_payload"
            f" ({limit}) allows"
        )


async def scan(bucket: Bucket, pattern: str) -> list[tuple[str, bytes]]:
    """Every live (key, value) matching the subject pattern, as of the call.

    Not `KeyValue.watch`: its end-of-replay marker can come before the replay has ended
    (nats.py#842, #995; a per-message pending count that reaches 0 and grows again), and
    a scan that stops there misses keys: a ListQueues or a metrics scrape without a
    queue that exists. A pull consumer has delivered nothing when it is created, so its
    pending count then says exactly how many entries (deletion markers included) the
    scan must read."""
    stream, prefix = f"KV_{bucket.name}", f"$KV.{bucket.name}."
    config = ConsumerConfig(
        name=f"scan-{uuid.uuid4().hex}",
        filter_subject=prefix + pattern,
        deliver_policy=DeliverPolicy.LAST_PER_SUBJECT,
        ack_policy=AckPolicy.NONE,
        # Gone by itself should this process die before deleting it.
        inactive_threshold=SCAN_TIMEOUT_SECONDS * 12,
        mem_storage=True,
        num_replicas=1,
    )
    found = []
    with translated():
        info = await bucket.js.add_consumer(stream, config=config)
        try:
            sub = await bucket.js.pull_subscribe_bind(stream=stream, name=info.name)
            try:
                left = info.num_pending or 0
                while left > 0:
                    batch = await sub.fetch(min(left, SCAN_BATCH), timeout=SCAN_TIMEOUT_SECONDS)
                    for msg in batch:
                        left -= 1
                        operation = (msg.headers or {}).get("KV-Operation")
                        if msg.data and operation not in ("DEL", "PURGE"):
                            found.append((msg.subject[len(prefix) :], msg.data))
            finally:
                await sub.unsubscribe()
        finally:
            await bucket.js.delete_consumer(stream, info.name)
    return found
