"""Store contract: fair queues — a standard queue's tenants (group ids) and noisy ones.

AWS's rule (core/fairness.py): a tenant holding at least 30 in-flight messages and
more than 10% of the queue's in-flight messages is noisy; receives serve the other
tenants' messages first. Leases here are long, so "in flight" stays put while a test
looks.
"""

from __future__ import annotations

from hopper.core.clock import FakeClock
from hopper.core.model import Delivery, NewMessage, QueueKey
from hopper.core.store import QueueStore

from .factories import delete, make_queue, message, receive


async def send_all(
    store: QueueStore, clock: FakeClock, queue: QueueKey, messages: list[NewMessage]
) -> None:
    for start in range(0, len(messages), 10):
        await store.send(queue, messages[start : start + 10], now=clock.now())


def tenant(group: str | None, count: int, prefix: str | None = None) -> list[NewMessage]:
    name = prefix or group or "u"
    return [message(f"{name}{n}", group_id=group) for n in range(count)]


async def take(store: QueueStore, clock: FakeClock, queue: QueueKey, count: int) -> list[Delivery]:
    """Receive `count` messages (10 at a time) and keep them in flight."""
    taken: list[Delivery] = []
    while len(taken) < count:
        taken += await receive(store, clock, queue, n=min(10, count - len(taken)), lease=600)
    return taken


def bodies(deliveries: list[Delivery]) -> list[str]:
    return [d.message.body for d in deliveries]


async def test_a_noisy_tenant_cannot_starve_a_quiet_one(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await send_all(store, clock, queue, tenant("noisy", 100))
    await take(store, clock, queue, 30)  # noisy: 30 in flight, 100% of them
    await send_all(store, clock, queue, tenant("quiet", 3) + tenant(None, 2))

    batch = await receive(store, clock, queue, n=7, lease=600)

    # The quiet tenants' newer messages first (oldest first among them), then noisy's.
    assert bodies(batch) == ["quiet0", "quiet1", "quiet2", "u0", "u1", "noisy30", "noisy31"]


async def test_a_single_receive_after_the_noise_starts_gets_the_quiet_message(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await send_all(store, clock, queue, tenant("noisy", 50))
    await take(store, clock, queue, 40)
    await send_all(store, clock, queue, tenant("quiet", 1))
    assert bodies(await receive(store, clock, queue, n=1)) == ["quiet0"]


async def test_without_noise_receives_stay_oldest_first(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await send_all(store, clock, queue, tenant("big", 40))
    await take(store, clock, queue, 29)  # one short of the 30 that make a tenant noisy
    await send_all(store, clock, queue, tenant("small", 2))
    assert bodies(await receive(store, clock, queue, n=3)) == ["big29", "big30", "big31"]


async def test_a_tenant_holding_no_more_than_a_tenth_of_the_in_flight_is_not_noisy(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await send_all(store, clock, queue, tenant("a", 30) + tenant(None, 300))
    await take(store, clock, queue, 330)  # a: 30 of 330 in flight, 9%
    later = tenant("a", 1, prefix="a-late") + tenant(None, 1, prefix="u-late")
    await send_all(store, clock, queue, later)
    assert bodies(await receive(store, clock, queue, n=1)) == ["a-late0"]


async def test_messages_without_a_group_id_are_each_their_own_tenant(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await send_all(store, clock, queue, tenant(None, 50))
    await take(store, clock, queue, 40)  # 40 ungrouped in flight: 40 tenants of one each
    await send_all(store, clock, queue, tenant("g", 1))
    assert bodies(await receive(store, clock, queue, n=1)) == ["u40"]


async def test_noisy_tenants_are_served_fewest_in_flight_first(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await send_all(store, clock, queue, tenant("a", 41) + tenant("b", 31))
    await take(store, clock, queue, 70)  # a: 40 in flight, b: 30; both noisy
    await send_all(store, clock, queue, tenant("quiet", 1))
    assert bodies(await receive(store, clock, queue, n=3)) == ["quiet0", "b30", "a40"]


async def test_a_tenant_is_quiet_again_once_its_messages_are_done(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await send_all(store, clock, queue, tenant("noisy", 40))
    in_flight = await take(store, clock, queue, 30)
    await send_all(store, clock, queue, tenant("quiet", 1))
    for delivery in in_flight:
        await delete(store, clock, queue, delivery.receipt)
    assert bodies(await receive(store, clock, queue, n=1)) == ["noisy30"]


async def test_a_tenant_is_quiet_again_once_its_leases_run_out(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await send_all(store, clock, queue, tenant("noisy", 40))
    await take(store, clock, queue, 30)
    await send_all(store, clock, queue, tenant("quiet", 1))
    clock.advance(600)
    # The 30 are receivable again, older than the quiet message and nobody is noisy.
    assert bodies(await receive(store, clock, queue, n=1)) == ["noisy0"]


async def test_a_noisy_tenants_messages_are_received_when_nothing_else_waits(
    store: QueueStore, clock: FakeClock
) -> None:
    queue = await make_queue(store, clock)
    await send_all(store, clock, queue, tenant("noisy", 40))
    await take(store, clock, queue, 30)
    assert bodies(await receive(store, clock, queue, n=2)) == ["noisy30", "noisy31"]
