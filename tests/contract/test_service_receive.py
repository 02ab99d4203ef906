"""QueueService over every store: receive parameters and long polling.

Long polls wait in real time (the event loop's); the store's time is the fake clock.
The service's polling fallback is 30 s and the waits 20 s, so a poll that returns
within the generous 5 s bound was woken, not polled.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from hopper.core.clock import FakeClock
from hopper.core.errors import InvalidParameter, QueueNotFound
from hopper.core.model import (
    DeadLetterRule,
    Delivery,
    MessageDraft,
    QueueKey,
    VisibilityChange,
)
from hopper.core.service import QueueService
from hopper.core.store import QueueStore

from .factories import key

PROMPTLY = 5.0


async def until_waiting(service: QueueService, queue: QueueKey) -> None:
    # Yield to the loop until the long poll has registered its watch (no timed sleeps).
    while service.wakeups.waiting(queue) == 0:
        await asyncio.sleep(0)


@pytest.mark.parametrize(
    ("arguments", "parameter"),
    [
        ({"max_messages": 0}, "MaxNumberOfMessages"),
        ({"max_messages": 11}, "MaxNumberOfMessages"),
        ({"visibility_timeout": -1}, "VisibilityTimeout"),
        ({"visibility_timeout": 43_201}, "VisibilityTimeout"),
        ({"wait_time": -1}, "WaitTimeSeconds"),
        ({"wait_time": 21}, "WaitTimeSeconds"),
    ],
)
async def test_receive_parameters_out_of_range_are_invalid(
    service: QueueService, arguments: dict[str, float], parameter: str
) -> None:
    await service.create_queue(key("q"), {}, {})
    with pytest.raises(InvalidParameter) as caught:
        await service.receive(key("q"), **arguments)  # type: ignore[arg-type]
    assert caught.value.parameter == parameter


async def test_receive_uses_the_queue_visibility_timeout_by_default(
    service: QueueService, clock: FakeClock
) -> None:
    await service.create_queue(key("q"), {"visibility_timeout": 12.0}, {})
    await service.send(key("q"), MessageDraft("x"))
    [delivery] = await service.receive(key("q"))
    assert delivery.visible_at == clock.time() + 12


async def test_receive_on_an_empty_queue_without_wait_returns_nothing(
    service: QueueService,
) -> None:
    await service.create_queue(key("q"), {}, {})
    assert await service.receive(key("q")) == []


async def test_long_poll_returns_promptly_when_a_message_is_sent_during_the_wait(
    service: QueueService,
) -> None:
    await service.create_queue(key("q"), {}, {})
    poll = asyncio.create_task(service.receive(key("q"), wait_time=20))
    await until_waiting(service, key("q"))
    await service.send(key("q"), MessageDraft("hello"))
    async with asyncio.timeout(PROMPTLY):
        [delivery] = await poll
    assert delivery.message.body == "hello"


async def test_long_poll_uses_the_queue_wait_time_by_default(service: QueueService) -> None:
    await service.create_queue(key("q"), {"receive_message_wait_time_seconds": 20.0}, {})
    poll = asyncio.create_task(service.receive(key("q")))
    await until_waiting(service, key("q"))
    await service.send_batch(key("q"), [MessageDraft("a")])
    async with asyncio.timeout(PROMPTLY):
        assert len(await poll) == 1


async def test_long_poll_is_not_woken_by_a_delayed_message(service: QueueService) -> None:
    await service.create_queue(key("q"), {}, {})
    poll = asyncio.create_task(service.receive(key("q"), wait_time=0.2))
    await until_waiting(service, key("q"))
    await service.send(key("q"), MessageDraft("later", delay=60))
    assert await poll == []


async def test_long_poll_ends_empty_at_its_deadline(service: QueueService) -> None:
    await service.create_queue(key("q"), {}, {})
    async with asyncio.timeout(PROMPTLY):
        assert await service.receive(key("q"), wait_time=0.05) == []


async def test_long_poll_wakes_when_a_lease_runs_out(
    service: QueueService, clock: FakeClock
) -> None:
    await service.create_queue(key("q"), {}, {})
    await service.send(key("q"), MessageDraft("x"))
    [first] = await service.receive(key("q"), visibility_timeout=0.2)
    poll = asyncio.create_task(service.receive(key("q"), wait_time=20))
    await until_waiting(service, key("q"))
    # The store's clock passes the deadline; the poll sleeps until next_visible_at.
    clock.advance(0.2)
    async with asyncio.timeout(PROMPTLY):
        [again] = await poll
    assert again.message.id == first.message.id and again.token > first.token


async def test_long_poll_wakes_when_visibility_is_changed(service: QueueService) -> None:
    await service.create_queue(key("q"), {}, {})
    await service.send(key("q"), MessageDraft("x"))
    [first] = await service.receive(key("q"), visibility_timeout=600)
    poll = asyncio.create_task(service.receive(key("q"), wait_time=20))
    await until_waiting(service, key("q"))
    await service.change_visibility(key("q"), VisibilityChange(first.receipt, 0))
    async with asyncio.timeout(PROMPTLY):
        assert len(await poll) == 1


async def test_long_poll_on_a_queue_deleted_meanwhile_ends_with_queue_not_found(
    service: QueueService,
) -> None:
    await service.create_queue(key("q"), {}, {})
    poll = asyncio.create_task(service.receive(key("q"), wait_time=20))
    await until_waiting(service, key("q"))
    await service.delete_queue(key("q"))
    async with asyncio.timeout(PROMPTLY):
        with pytest.raises(QueueNotFound):
            await poll
    assert service.wakeups.waiting(key("q")) == 0


async def test_many_long_polls_share_the_messages_without_duplicates(
    service: QueueService,
) -> None:
    await service.create_queue(key("q"), {}, {})
    polls = [asyncio.create_task(service.receive(key("q"), wait_time=20)) for _ in range(5)]
    while service.wakeups.waiting(key("q")) < 5:
        await asyncio.sleep(0)
    await service.send_batch(key("q"), [MessageDraft(f"m{i}") for i in range(5)])
    async with asyncio.timeout(PROMPTLY):
        batches = await asyncio.gather(*polls)
    ids = [d.message.id for batch in batches for d in batch]
    assert len(ids) == len(set(ids)) == 5


async def test_dead_letter_queue_poll_wakes_when_a_message_is_moved(
    service: QueueService, clock: FakeClock
) -> None:
    await service.create_queue(key("dlq"), {}, {})
    await service.create_queue(key("q"), {"dead_letter": DeadLetterRule(key("dlq"), 1)}, {})
    await service.send(key("q"), MessageDraft("poison"))
    await service.receive(key("q"), visibility_timeout=1)
    clock.advance(1)
    poll = asyncio.create_task(service.receive(key("dlq"), wait_time=20))
    await until_waiting(service, key("dlq"))
    assert await service.receive(key("q")) == []
    async with asyncio.timeout(PROMPTLY):
        [moved] = await poll
    assert moved.message.dead_letter_source == key("q")


async def test_fifo_long_poll_wakes_when_the_group_is_unlocked_by_a_delete(
    service: QueueService,
) -> None:
    await service.create_queue(key("q.fifo"), {"fifo": True}, {})
    drafts = [MessageDraft(b, group_id="g", deduplication_id=b) for b in ("one", "two")]
    await service.send_batch(key("q.fifo"), drafts)
    [first] = await service.receive(key("q.fifo"), visibility_timeout=600)
    poll = asyncio.create_task(service.receive(key("q.fifo"), wait_time=20))
    await until_waiting(service, key("q.fifo"))
    await service.delete(key("q.fifo"), first.receipt)
    async with asyncio.timeout(PROMPTLY):
        [second] = await poll
    assert second.message.body == "two"


# --- messages handed to waiting long polls as they arrive (core/handoff.py) ------------


async def until_taking(service: QueueService, queue: QueueKey) -> None:
    # Yield until a long poll waits idle, ready to take a message as it arrives.
    while not service.wakeups.takers(queue):
        await asyncio.sleep(0)


def count_claims(store: QueueStore) -> list[int]:
    """Count the store's receives from now on (a spy on the real store)."""
    calls = [0]
    claim = store.receive

    async def counted(*args: Any, **kwargs: Any) -> list[Delivery]:
        calls[0] += 1
        return await claim(*args, **kwargs)

    store.receive = counted  # type: ignore[method-assign]
    return calls


async def test_a_message_sent_during_a_long_poll_is_handed_to_it_without_a_claim(
    service: QueueService, clock: FakeClock
) -> None:
    await service.create_queue(key("q"), {}, {})
    poll = asyncio.create_task(service.receive(key("q"), wait_time=20, visibility_timeout=45))
    await until_taking(service, key("q"))
    claims = count_claims(service.store)
    sent = await service.send(key("q"), MessageDraft("hello"))
    async with asyncio.timeout(PROMPTLY):
        [delivery] = await poll
    assert claims == [0]
    assert delivery.message.id == sent.message_id
    assert delivery.message.body == "hello"
    assert delivery.receive_count == 1
    assert delivery.visible_at == clock.time() + 45
    stats = await service.queue_stats(key("q"))
    assert (stats.visible, stats.in_flight) == (0, 1)
    await service.delete(key("q"), delivery.receipt)
    assert (await service.queue_stats(key("q"))).in_flight == 0


async def test_a_long_poll_is_handed_no_more_than_it_asked_for(service: QueueService) -> None:
    await service.create_queue(key("q"), {}, {})
    poll = asyncio.create_task(service.receive(key("q"), max_messages=2, wait_time=20))
    await until_taking(service, key("q"))
    await service.send_batch(key("q"), [MessageDraft(f"m{i}") for i in range(5)])
    async with asyncio.timeout(PROMPTLY):
        handed = await poll
    assert [d.message.body for d in handed] == ["m0", "m1"]
    rest = await service.receive(key("q"), max_messages=10)
    assert sorted(d.message.body for d in rest) == ["m2", "m3", "m4"]


async def test_a_tenant_message_of_a_fair_queue_goes_through_the_claim(
    service: QueueService,
) -> None:
    await service.create_queue(key("q"), {}, {})
    poll = asyncio.create_task(service.receive(key("q"), wait_time=20))
    await until_taking(service, key("q"))
    claims = count_claims(service.store)
    await service.send(key("q"), MessageDraft("tenant's", group_id="t1"))
    async with asyncio.timeout(PROMPTLY):
        [delivery] = await poll
    assert claims[0] >= 1
    assert delivery.message.group_id == "t1"


async def test_a_message_handed_to_a_poll_cancelled_before_answering_is_released(
    service: QueueService,
) -> None:
    await service.create_queue(key("q"), {}, {})
    poll = asyncio.create_task(service.receive(key("q"), wait_time=20, visibility_timeout=600))
    await until_taking(service, key("q"))
    sent = await service.send(key("q"), MessageDraft("orphan"))
    poll.cancel()  # handed over, not yet answered with
    await asyncio.gather(poll, return_exceptions=True)
    assert poll.cancelled()
    async with asyncio.timeout(PROMPTLY):
        while not (again := await service.receive(key("q"))):
            await asyncio.sleep(0)  # the release runs in the background
    [delivery] = again
    assert delivery.message.id == sent.message_id
    assert delivery.receive_count == 2


async def test_a_failed_send_leaves_the_poll_it_was_offered_to_looking(
    service: QueueService, clock: FakeClock
) -> None:
    await service.create_queue(key("q"), {}, {})
    poll = asyncio.create_task(service.receive(key("q"), wait_time=20))
    await until_taking(service, key("q"))
    await service.store.delete_queue(key("q"), now=clock.now())  # behind the core's back
    with pytest.raises(QueueNotFound):
        await service.send(key("q"), MessageDraft("nowhere"))
    async with asyncio.timeout(PROMPTLY):
        with pytest.raises(QueueNotFound):
            await poll


# --- a long poll whose caller went away ---------------------------------------------------


async def test_a_long_poll_ends_empty_when_its_caller_goes_away(service: QueueService) -> None:
    await service.create_queue(key("q"), {}, {})
    departed = asyncio.Event()
    poll = asyncio.create_task(service.receive(key("q"), wait_time=20, gone=departed.wait))
    await until_taking(service, key("q"))
    departed.set()
    async with asyncio.timeout(PROMPTLY):
        assert await poll == []
    assert service.wakeups.waiting(key("q")) == 0
    sent = await service.send(key("q"), MessageDraft("for somebody"))
    [delivery] = await service.receive(key("q"))
    assert (delivery.message.id, delivery.receive_count) == (sent.message_id, 1)


async def test_a_message_handed_as_the_caller_goes_away_is_released(
    service: QueueService,
) -> None:
    await service.create_queue(key("q"), {}, {})
    departed, noticed, stored = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def gone() -> None:
        await departed.wait()
        noticed.set()  # the poll is interrupted in this same step

    poll = asyncio.create_task(
        service.receive(key("q"), wait_time=20, visibility_timeout=600, gone=gone)
    )
    await until_taking(service, key("q"))
    store_send = service.store.send

    async def held_send(*args: Any, **kwargs: Any) -> Any:
        await stored.wait()
        return await store_send(*args, **kwargs)

    service.store.send = held_send  # type: ignore[method-assign]
    send = asyncio.create_task(service.send(key("q"), MessageDraft("orphan")))
    while service.wakeups.takers(key("q")):
        await asyncio.sleep(0)  # until the send has offered it to the poll
    departed.set()
    await noticed.wait()
    stored.set()  # the message arrives, handed to a poll whose caller has gone
    async with asyncio.timeout(PROMPTLY):
        sent = await send
        assert await poll == []
        while not (again := await service.receive(key("q"))):
            await asyncio.sleep(0)  # the release runs in the background
    [delivery] = again
    assert (delivery.message.id, delivery.receive_count) == (sent.message_id, 2)


async def test_a_long_poll_that_finds_messages_does_not_watch_its_caller(
    service: QueueService,
) -> None:
    await service.create_queue(key("q"), {}, {})
    await service.send(key("q"), MessageDraft("waiting"))
    asked: list[bool] = []

    async def gone() -> None:
        asked.append(True)
        await asyncio.Event().wait()

    [delivery] = await service.receive(key("q"), wait_time=20, gone=gone)
    assert delivery.message.body == "waiting"
    assert asked == []
