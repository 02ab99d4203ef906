"""One of three JetStream nodes killed under load, with every stream and bucket
replicated three times (`--nats-replicas 3`): no acknowledged message lost, no message
held by two receivers within one lease, and the service back within a measured bound.

Around the kill a request can take longer than the clients' read timeout (it waits
behind a step whose request to the dead leader times out), and a step whose request
timed out may still have been committed by the new leader. A receive whose answer its
client never had can therefore have leased messages nobody saw: they are not lost (they
come back when the lease ends, as on SQS), but the drain cannot see them within the
lease. So a message counts as lost only when it was neither received nor is still in the
queue, and still held ones are allowed only if some receive went unanswered.

JetStream-only: replication is the engine's, not a process's or the contract's.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx
import nats
import pytest
from botocore.exceptions import BotoCoreError, ClientError

from hopper.core.errors import StoreUnavailable
from hopper.store.jetstream import edge
from tests.postgres.test_processes import client, in_thread, receive_everything
from tests.server.processes import HopperProcess, start_hopper

from .servers import Cluster

# Three-node clusters and SIGKILL: the slow lane.
pytestmark = pytest.mark.slow

T = TypeVar("T")

SENDERS = 4
RECEIVERS = 4
LOAD_SECONDS = 25.0
KILL_AT = 3.0  # seconds into the load
LEASE = 120  # the receivers' visibility timeout: longer than the whole test
RECOVERY_BOUND = 15.0  # seconds without a successful call, at most
WAIT_SECONDS = 30.0


async def ready(cluster: Cluster) -> None:
    """Until the cluster has elected its JetStream meta leader (bounded)."""
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        try:
            nc = await nats.connect(cluster.urls, connect_timeout=1)
            try:
                await nc.jetstream(timeout=1).account_info()
                return
            finally:
                await nc.close()
        except (TimeoutError, nats.errors.Error, OSError):
            await asyncio.sleep(0.1)  # still electing: ask again shortly
    raise AssertionError("the JetStream cluster never became ready")


async def ledger_leader(cluster: Cluster, stream: str = "KV_hopper_ledgers") -> str:
    """The node that leads the ledger bucket's stream (the one worth killing), or
    another stream's."""
    nc = await nats.connect(cluster.urls)
    try:
        info = await nc.jetstream().stream_info(stream)
        assert info.cluster is not None and info.cluster.leader is not None
        assert len(info.cluster.replicas or []) == 2, "the bucket is not replicated thrice"
        return info.cluster.leader
    finally:
        await nc.close()


async def new_leader(cluster: Cluster, old: str) -> str:
    """Until the ledger bucket's stream has elected a leader other than `old` (bounded)."""
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        try:
            leader = await ledger_leader(cluster)
            if leader != old:
                return leader
        except (AssertionError, TimeoutError, nats.errors.Error, OSError):
            pass  # no leader yet
        await asyncio.sleep(0.1)  # still electing: ask again shortly
    raise AssertionError("the ledger bucket never elected a new leader")


async def available(call: Callable[[], Awaitable[T]]) -> T:
    """`call`'s result once the store's connection and the stream answer (bounded)."""
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        try:
            return await call()
        except StoreUnavailable:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.1)  # reconnecting to a live node: try again shortly


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    cluster = Cluster()
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()


class Load:
    """Senders and receivers over one queue until told to stop. Every call's success
    time is kept (the longest silence is the outage); `acknowledged` holds the ids of
    sends that were answered, `received` every id a receive handed out, `unanswered`
    how many receives failed at the client (an error or no answer in time)."""

    def __init__(self, server: HopperProcess, url: str) -> None:
        self.url = url
        self.stop = threading.Event()
        self.acknowledged: list[str] = []
        self.received: list[str] = []
        self.unanswered = 0
        self.successes: list[float] = []
        self._lock = threading.Lock()
        self._clients = [client(server) for _ in range(SENDERS + RECEIVERS)]
        self._threads = [
            threading.Thread(target=self._run, args=(n,)) for n in range(SENDERS + RECEIVERS)
        ]

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def join(self) -> None:
        for thread in self._threads:
            thread.join(WAIT_SECONDS)
            assert not thread.is_alive(), "a client is stuck"

    def _run(self, n: int) -> None:
        sqs = self._clients[n]
        for i in itertools.count():
            if self.stop.is_set():
                return
            try:
                if n < SENDERS:
                    self._send(sqs, n, i)
                else:
                    self._receive(sqs)
            except (BotoCoreError, ClientError):
                time.sleep(0.05)  # unavailable for now: as an SDK would, try again shortly
                continue
            with self._lock:
                self.successes.append(time.monotonic())

    def _send(self, sqs: Any, n: int, i: int) -> None:
        answer = sqs.send_message(QueueUrl=self.url, MessageBody=f"{n}-{i}")
        with self._lock:
            self.acknowledged.append(answer["MessageId"])

    def _receive(self, sqs: Any) -> None:
        try:
            batch = sqs.receive_message(
                QueueUrl=self.url, MaxNumberOfMessages=10, VisibilityTimeout=LEASE
            ).get("Messages", [])
        except (BotoCoreError, ClientError):
            with self._lock:
                self.unanswered += 1
            raise
        with self._lock:
            self.received.extend(m["MessageId"] for m in batch)
        if batch:
            # A delete lost to the outage leaves its message leased past the test's end:
            # it must not come back during it.
            sqs.delete_message_batch(QueueUrl=self.url, Entries=[
                {"Id": str(k), "ReceiptHandle": m["ReceiptHandle"]} for k, m in enumerate(batch)
            ])


def leased(server: HopperProcess, url: str) -> set[str]:
    """The ids the queue still holds under a lease, read through the console's message
    browser (which changes nothing)."""
    answer = httpx.get(f"{server.url}/dashboard/api/queues{urlsplit(url).path}/messages")
    answer.raise_for_status()
    return {m["id"] for m in answer.json()["messages"] if m["state"] == "in_flight"}


async def test_one_of_three_nodes_killed_under_load_loses_nothing_and_recovers(
    cluster: Cluster, tmp_path: Path
) -> None:
    await ready(cluster)
    urls = ",".join(node.url for node in cluster.nodes)
    server = await in_thread(
        lambda: start_hopper("--nats-url", urls, "--nats-replicas", "3", log=tmp_path / "h.log")
    )
    try:
        sqs = client(server)
        url = sqs.create_queue(QueueName="failover")["QueueUrl"]
        leader = await ledger_leader(cluster)
        victim = next(node for node in cluster.nodes if node.name == leader)
        load = Load(server, url)
        load.start()
        try:
            await asyncio.sleep(KILL_AT)  # the load's own pace: a time into it, not an event
            killed_at = time.monotonic()
            victim.kill()
            await asyncio.sleep(LOAD_SECONDS - KILL_AT)
        finally:
            load.stop.set()
            await in_thread(load.join)
        after = [t for t in load.successes if t >= killed_at]
        assert after, f"nothing succeeded after the kill:\n{server.output()}"
        # The outage: the longest silence from the kill on.
        gaps = [b - a for a, b in itertools.pairwise([killed_at, *sorted(after)])]
        outage = max(gaps)
        most = len(load.acknowledged) + SENDERS
        drained = await in_thread(receive_everything, client(server), url, most)
        held = await in_thread(leased, server, url)
    finally:
        code = server.stop()
    print(
        f"\nkilled {leader} (the ledger's leader): longest silence {outage * 1000:.0f} ms;"
        f" {len(load.acknowledged)} acknowledged, {len(load.received)} received under"
        f" load, {len(drained)} drained after, {len(held)} still leased;"
        f" {load.unanswered} receives unanswered"
    )
    assert code == 0, server.output()
    received = load.received + drained
    assert len(received) == len(set(received)), "a message was held by two receivers"
    missing = set(load.acknowledged) - set(received)
    lost = missing - held
    assert not lost, f"{len(lost)} of {len(load.acknowledged)} acknowledged messages lost"
    # Held but never seen: leased to a receive whose answer its client never had.
    assert not missing or load.unanswered, f"{len(missing)} messages leased to no receive"
    assert outage < RECOVERY_BOUND


def fill(server: HopperProcess, url: str, count: int) -> list[str]:
    """`count` messages sent in batches of ten by eight clients; their ids."""
    sent: list[str] = []
    lock = threading.Lock()

    def sender(n: int) -> None:
        sqs = client(server)
        for start in range(n * 10, count, 80):
            entries = [{"Id": str(k), "MessageBody": f"deep-{start + k}"} for k in range(10)]
            answer = sqs.send_message_batch(QueueUrl=url, Entries=entries)
            assert not answer.get("Failed"), answer
            with lock:
                sent.extend(m["MessageId"] for m in answer["Successful"])

    threads = [threading.Thread(target=sender, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sent


def drain_all(server: HopperProcess, url: str, most: int) -> list[str]:
    """receive_everything by eight clients at once; every id received, repeats included."""
    received: list[list[str]] = [[] for _ in range(8)]

    def drainer(n: int) -> None:
        received[n] = receive_everything(client(server), url, most)

    threads = [threading.Thread(target=drainer, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [mid for ids in received for mid in ids]


DEEP = 100_000


async def test_the_bodies_leader_killed_under_load_on_a_deep_queue_loses_nothing(
    cluster: Cluster, tmp_path: Path
) -> None:
    """The same at scale (issue 26): a queue holding 100,000 messages, and the node
    leading the stream that holds every queue's backlog killed under the load."""
    await ready(cluster)
    urls = ",".join(node.url for node in cluster.nodes)
    server = await in_thread(
        lambda: start_hopper("--nats-url", urls, "--nats-replicas", "3", log=tmp_path / "h.log")
    )
    try:
        sqs = client(server)
        url = sqs.create_queue(QueueName="deep-failover")["QueueUrl"]
        prefilled = await in_thread(fill, server, url, DEEP)
        leader = await ledger_leader(cluster, "HOPPER_BODIES")
        load = Load(server, url)
        load.start()
        try:
            await asyncio.sleep(KILL_AT)  # the load's own pace: a time into it, not an event
            killed_at = time.monotonic()
            next(node for node in cluster.nodes if node.name == leader).kill()
            await asyncio.sleep(LOAD_SECONDS - KILL_AT)
        finally:
            load.stop.set()
            await in_thread(load.join)
        after = [t for t in load.successes if t >= killed_at]
        assert after, f"nothing succeeded after the kill:\n{server.output()}"
        outage = max(b - a for a, b in itertools.pairwise([killed_at, *sorted(after)]))
        drained = await in_thread(drain_all, server, url, DEEP + len(load.acknowledged) + 80)
        held = await in_thread(leased, server, url)
    finally:
        code = server.stop()
    print(
        f"\nkilled {leader} (the bodies' leader) with {DEEP:,} queued: longest silence"
        f" {outage * 1000:.0f} ms; {len(load.acknowledged)} acknowledged under load,"
        f" {len(load.received)} received under load, {len(drained)} drained after,"
        f" {len(held)} still leased; {load.unanswered} receives unanswered"
    )
    assert code == 0, server.output()
    received = load.received + drained
    assert len(received) == len(set(received)), "a message was held by two receivers"
    lost = set(prefilled) | set(load.acknowledged)
    lost -= set(received) | held
    assert not lost, f"{len(lost)} acknowledged messages lost"
    assert outage < RECOVERY_BOUND


async def test_a_write_from_a_revision_superseded_before_a_leader_change_is_refused_after_it(
    cluster: Cluster,
) -> None:
    """The compare-and-set every ledger write rests on (`edge._write`) holds across a
    leader change: the new leader knows the acknowledged write and refuses a write based
    on the revision it replaced, rather than letting a stale step overwrite it."""
    await ready(cluster)
    res = await edge.connect(cluster.urls, replicas=3, prefix="hopper")
    try:
        first = await edge.put(res.ledgers, "ledger", b"one", 0)
        second = await edge.put(res.ledgers, "ledger", b"two", first)
        leader = await ledger_leader(cluster)
        next(node for node in cluster.nodes if node.name == leader).kill()
        await new_leader(cluster, leader)
        with pytest.raises(edge.Conflict):
            await available(lambda: edge.put(res.ledgers, "ledger", b"stale", first))
        assert await available(lambda: edge.get(res.ledgers, "ledger")) == (b"two", second)
    finally:
        await res.nc.close()
