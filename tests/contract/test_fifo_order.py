"""FIFO receive order over every store, as recorded on AWS (SQS-NOTES 5.11): a receive
takes each group's deliverable run whole before the next group, and groups come in the
order their run's first message became available (sent, or its lease ended). Each
recorded AWS example is one test here, under the fake clock."""

from __future__ import annotations

import pytest

from hopper.core.clock import FakeClock
from hopper.core.model import Delivery, MessageDraft, VisibilityChange
from hopper.core.service import QueueService

from .factories import key

QUEUE = key("order.fifo")
LEASE = 30.0


async def send(service: QueueService, *names: str) -> None:
    """One message per name `<group>-<message>`, sent in order; the body is the name."""
    for name in names:
        group = name.split("-")[0]
        await service.send(QUEUE, MessageDraft(name, group_id=group, deduplication_id=name))


async def receive(service: QueueService, n: int = 10, lease: float = LEASE) -> list[Delivery]:
    return await service.receive(QUEUE, max_messages=n, visibility_timeout=lease)


def bodies(deliveries: list[Delivery]) -> list[str]:
    return [d.message.body for d in deliveries]


@pytest.fixture
async def fifo(service: QueueService) -> QueueService:
    await service.create_queue(QUEUE, {"fifo": True}, {})
    return service


async def test_a_receive_takes_a_groups_whole_run_before_the_next_group(
    fifo: QueueService,
) -> None:
    # AWS: sends g1-m1, g2-m1, g1-m2, g1-m3 -> receive(10) = g1-m1, g1-m2, g1-m3, g2-m1.
    await send(fifo, "g1-m1", "g2-m1", "g1-m2", "g1-m3")
    assert bodies(await receive(fifo)) == ["g1-m1", "g1-m2", "g1-m3", "g2-m1"]


async def test_groups_come_in_the_order_their_first_message_became_available(
    fifo: QueueService, clock: FakeClock
) -> None:
    # AWS: sends g1-m1..m4, g2-m1, g3-m1; receive(2) -> g1-m1, g1-m2; receive(1) -> g2-m1;
    # after the leases expire, receive(10) -> g3-m1, g1-m1..m4, g2-m1.
    await send(fifo, "g1-m1", "g1-m2", "g1-m3", "g1-m4", "g2-m1", "g3-m1")
    clock.advance(1)
    assert bodies(await receive(fifo, 2)) == ["g1-m1", "g1-m2"]
    clock.advance(1)
    assert bodies(await receive(fifo, 1)) == ["g2-m1"]
    clock.advance(LEASE)
    assert bodies(await receive(fifo)) == [
        "g3-m1", "g1-m1", "g1-m2", "g1-m3", "g1-m4", "g2-m1",
    ]


@pytest.mark.parametrize(
    ("extended", "expected"),
    [("bar", ["foo"]), ("baz", ["foo", "bar"]), ("foo", [])],
)
async def test_a_message_whose_lease_ended_is_deliverable_while_a_later_one_is_in_flight(
    fifo: QueueService, clock: FakeClock, extended: str, expected: list[str]
) -> None:
    # AWS: foo, bar, baz received with a 1 s lease, one of them extended to 4 s; 2.5 s
    # later a receive gives the group's messages before the extended one.
    names = {"foo": "g-foo", "bar": "g-bar", "baz": "g-baz"}
    await send(fifo, *names.values())
    deliveries = {d.message.body: d for d in await receive(fifo, lease=1)}
    await fifo.change_visibility(QUEUE, VisibilityChange(deliveries[names[extended]].receipt, 4))
    clock.advance(2.5)
    assert bodies(await receive(fifo)) == [names[e] for e in expected]


async def test_a_head_released_while_a_later_message_is_in_flight_comes_after_older_groups(
    fifo: QueueService, clock: FakeClock
) -> None:
    # AWS: ChangeMessageVisibility(g1-m1, 0) while g1-m2 is in flight, then receive(3)
    # -> [g2-m1, g1-m1].
    await send(fifo, "g1-m1", "g1-m2", "g2-m1")
    clock.advance(1)
    head, _ = await receive(fifo, 2)
    clock.advance(1)
    await fifo.change_visibility(QUEUE, VisibilityChange(head.receipt, 0))
    assert bodies(await receive(fifo, 3)) == ["g2-m1", "g1-m1"]


async def test_a_zero_lease_leaves_the_message_deliverable_at_the_receive_time(
    fifo: QueueService, clock: FakeClock
) -> None:
    # Received with VisibilityTimeout=0, a message's lease ended at that receive: its
    # group queues behind groups whose messages were available before.
    await send(fifo, "g1-m1", "g2-m1")
    clock.advance(1)
    assert bodies(await receive(fifo, 1, lease=0)) == ["g1-m1"]
    assert bodies(await receive(fifo)) == ["g2-m1", "g1-m1"]


async def test_a_run_ends_at_a_delayed_message(fifo: QueueService, clock: FakeClock) -> None:
    await fifo.set_queue_attributes(QUEUE, {"delay_seconds": 10.0})
    await send(fifo, "g1-m1")
    await fifo.set_queue_attributes(QUEUE, {"delay_seconds": 0.0})
    await send(fifo, "g1-m2", "g2-m1")
    assert bodies(await receive(fifo)) == ["g2-m1"]
    clock.advance(10)
    assert bodies(await receive(fifo)) == ["g1-m1", "g1-m2"]


async def test_a_receive_cut_by_max_messages_leaves_the_rest_of_the_run_held(
    fifo: QueueService,
) -> None:
    # The run's head is in flight, so the rest of the group waits behind it.
    await send(fifo, "g1-m1", "g1-m2", "g1-m3", "g2-m1")
    assert bodies(await receive(fifo, 2)) == ["g1-m1", "g1-m2"]
    assert bodies(await receive(fifo)) == ["g2-m1"]


async def test_the_order_holds_in_a_queue_of_many_groups(
    fifo: QueueService, clock: FakeClock
) -> None:
    # Enough groups that a store may find the heads otherwise than group by group (the
    # Postgres claim walks the queue past 64 groups): released heads among fresh ones.
    await send(fifo, *[f"g{n}-a" for n in range(70)])
    clock.advance(1)
    held: dict[str, Delivery] = {}
    for _ in range(7):
        held |= {d.message.body: d for d in await receive(fifo, lease=100)}
    assert len(held) == 70
    for body in ("g50-a", "g7-a"):
        clock.advance(1)
        await fifo.change_visibility(QUEUE, VisibilityChange(held[body].receipt, 0))
    clock.advance(1)
    await send(fifo, "g7-b", *[f"h{n}-a" for n in range(70)])
    clock.advance(1)
    assert bodies(await receive(fifo)) == [
        "g50-a", "g7-a", "g7-b", *[f"h{n}-a" for n in range(7)],
    ]


async def test_the_order_holds_when_a_queue_of_many_groups_shrinks_to_few(
    fifo: QueueService, clock: FakeClock
) -> None:
    # A store may remember that a queue had many groups and keep walking it (the Postgres
    # claim does): after all but two groups are gone, their runs still come in the order
    # they became available, the one released first first.
    await send(fifo, *[f"g{n}-a" for n in range(70)])
    clock.advance(1)
    held: dict[str, Delivery] = {}
    for _ in range(7):
        held |= {d.message.body: d for d in await receive(fifo, lease=100)}
    assert len(held) == 70
    for body, delivery in held.items():
        if body not in ("g1-a", "g2-a"):
            await fifo.delete(QUEUE, delivery.receipt)
    await send(fifo, "g1-b", "g2-b")
    for body in ("g2-a", "g1-a"):
        clock.advance(1)
        await fifo.change_visibility(QUEUE, VisibilityChange(held[body].receipt, 0))
    clock.advance(1)
    assert bodies(await receive(fifo)) == ["g2-a", "g2-b", "g1-a", "g1-b"]


async def test_a_queue_of_many_groups_mostly_in_flight_serves_the_few_others_in_order(
    fifo: QueueService, clock: FakeClock
) -> None:
    # Fewer groups deliverable than the receive asks for, in a queue of many groups (the
    # Postgres claim then probes every group instead of walking the queue): the others'
    # runs, whole, in the order they became available.
    await send(fifo, *[f"g{n}-a" for n in range(70)], *[f"g{n}-b" for n in range(70)])
    clock.advance(1)
    for n in range(67):
        assert bodies(await receive(fifo, 1)) == [f"g{n}-a"]
    assert bodies(await receive(fifo)) == [f"g{n}-{m}" for n in (67, 68, 69) for m in "ab"]
