"""QueueService over every store: the bounds of a queue (issue 4, point 6).

hopper's depth ceiling (`maximum_depth`, off by default), AWS's in-flight limit of
standard queues (injected small here instead of 120,000), AWS's 12-hour total
visibility limit, and hopper's optional visibility floor.
"""

from __future__ import annotations

import pytest

from hopper.core.bounds import IN_FLIGHT_REFRESH_SECONDS, Adjustments
from hopper.core.clock import FakeClock
from hopper.core.errors import InvalidParameter, OverLimit
from hopper.core.model import MessageDraft, SendResult, VisibilityChange
from hopper.core.service import QueueService
from hopper.core.store import QueueStore

from .factories import key

TWELVE_HOURS = 43_200


def _service(store: QueueStore, clock: FakeClock, **options: float | int | None) -> QueueService:
    return QueueService(store, clock=clock, poll_fallback_seconds=30.0, **options)  # type: ignore[arg-type]


async def _depth(service: QueueService, name: str = "q") -> int:
    stats = await service.queue_stats(key(name))
    return stats.visible + stats.in_flight + stats.delayed


async def _fill(service: QueueService, count: int, name: str = "q") -> None:
    for index in range(count):
        await service.send(key(name), MessageDraft(f"m{index}"))


# --- the depth ceiling ----------------------------------------------------------------


async def test_a_queue_has_no_depth_ceiling_by_default(service: QueueService) -> None:
    await service.create_queue(key("q"), {}, {})
    await service.send_batch(key("q"), [MessageDraft(str(i)) for i in range(10)])
    await _fill(service, 15)
    assert await _depth(service) == 25


async def test_send_to_a_queue_at_its_maximum_depth_raises_over_limit(
    service: QueueService,
) -> None:
    await service.create_queue(key("q"), {"maximum_depth": 2}, {})
    await _fill(service, 2)
    with pytest.raises(OverLimit):
        await service.send(key("q"), MessageDraft("one too many"))
    assert await _depth(service) == 2


async def test_in_flight_and_delayed_messages_count_towards_the_depth(
    service: QueueService,
) -> None:
    await service.create_queue(key("q"), {"maximum_depth": 3}, {})
    await service.send(key("q"), MessageDraft("delayed", delay=60))
    await service.send(key("q"), MessageDraft("in flight"))
    assert len(await service.receive(key("q"))) == 1
    await service.send(key("q"), MessageDraft("visible"))
    with pytest.raises(OverLimit):
        await service.send(key("q"), MessageDraft("one too many"))


async def test_messages_past_retention_leave_room_under_the_ceiling(
    service: QueueService, clock: FakeClock
) -> None:
    await service.create_queue(
        key("q"), {"maximum_depth": 2, "message_retention_period": 60}, {}
    )
    await _fill(service, 2)
    clock.advance(61)
    results = await service.send_batch(key("q"), [MessageDraft(str(i)) for i in range(3)])
    assert [type(result) for result in results] == [SendResult, SendResult, OverLimit]
    assert await _depth(service) == 2


async def test_deleting_a_message_makes_room_for_one_more_send(service: QueueService) -> None:
    await service.create_queue(key("q"), {"maximum_depth": 1}, {})
    await service.send(key("q"), MessageDraft("first"))
    [delivery] = await service.receive(key("q"))
    await service.delete(key("q"), delivery.receipt)
    await service.send(key("q"), MessageDraft("second"))
    assert await _depth(service) == 1


async def test_batch_at_the_ceiling_sends_the_entries_that_fit_and_fails_the_rest(
    service: QueueService,
) -> None:
    await service.create_queue(key("q"), {"maximum_depth": 3}, {})
    await service.send(key("q"), MessageDraft("already there"))
    results = await service.send_batch(key("q"), [MessageDraft(str(i)) for i in range(4)])
    assert [type(result) for result in results] == [SendResult, SendResult, OverLimit, OverLimit]
    assert await _depth(service) == 3
    bodies = {d.message.body for d in await service.receive(key("q"), max_messages=10)}
    assert bodies == {"already there", "0", "1"}


async def test_setting_the_ceiling_to_none_lifts_it(service: QueueService) -> None:
    await service.create_queue(key("q"), {"maximum_depth": 1}, {})
    await service.send(key("q"), MessageDraft("first"))
    await service.set_queue_attributes(key("q"), {"maximum_depth": None})
    await service.send(key("q"), MessageDraft("second"))
    assert await _depth(service) == 2


async def test_a_fifo_send_refused_at_the_ceiling_does_not_take_its_deduplication_id(
    service: QueueService,
) -> None:
    queue = key("q.fifo")
    await service.create_queue(queue, {"fifo": True, "maximum_depth": 1}, {})
    await service.send(queue, MessageDraft("a", group_id="g", deduplication_id="a"))
    with pytest.raises(OverLimit):
        await service.send(queue, MessageDraft("b", group_id="g", deduplication_id="b"))
    [delivery] = await service.receive(queue)
    await service.delete(queue, delivery.receipt)
    result = await service.send(queue, MessageDraft("b", group_id="g", deduplication_id="b"))
    assert not result.duplicate
    [delivery] = await service.receive(queue)
    assert delivery.message.body == "b"


# --- the in-flight limit ----------------------------------------------------------------


async def test_short_poll_at_the_in_flight_limit_raises_over_limit(
    store: QueueStore, clock: FakeClock
) -> None:
    service = _service(store, clock, max_in_flight=3)
    await service.create_queue(key("q"), {}, {})
    await _fill(service, 5)
    assert len(await service.receive(key("q"), max_messages=10)) == 3
    with pytest.raises(OverLimit):
        await service.receive(key("q"))


async def test_a_receive_claims_no_more_than_the_in_flight_room_left(
    store: QueueStore, clock: FakeClock
) -> None:
    service = _service(store, clock, max_in_flight=3)
    await service.create_queue(key("q"), {}, {})
    await _fill(service, 5)
    assert len(await service.receive(key("q"), max_messages=2)) == 2
    assert len(await service.receive(key("q"), max_messages=10)) == 1


async def test_long_poll_at_the_in_flight_limit_returns_no_messages_and_no_error(
    store: QueueStore, clock: FakeClock
) -> None:
    # As AWS documents: "If you use long polling, Amazon SQS returns no error messages."
    service = _service(store, clock, max_in_flight=1)
    await service.create_queue(key("q"), {}, {})
    await _fill(service, 2)
    assert len(await service.receive(key("q"))) == 1
    assert await service.receive(key("q"), wait_time=1) == []


async def test_deleting_an_in_flight_message_makes_room_under_the_limit(
    store: QueueStore, clock: FakeClock
) -> None:
    service = _service(store, clock, max_in_flight=1)
    await service.create_queue(key("q"), {}, {})
    await _fill(service, 2)
    [delivery] = await service.receive(key("q"))
    await service.delete(key("q"), delivery.receipt)
    assert len(await service.receive(key("q"))) == 1


async def test_leases_that_ran_out_leave_the_in_flight_count_at_the_next_measurement(
    store: QueueStore, clock: FakeClock
) -> None:
    service = _service(store, clock, max_in_flight=1)
    await service.create_queue(key("q"), {}, {})
    await _fill(service, 1)
    assert len(await service.receive(key("q"), visibility_timeout=10)) == 1
    clock.advance(max(10, IN_FLIGHT_REFRESH_SECONDS) + 1)
    assert len(await service.receive(key("q"))) == 1


async def test_fifo_queues_are_not_held_to_the_standard_in_flight_limit(
    store: QueueStore, clock: FakeClock
) -> None:
    service = _service(store, clock, max_in_flight=1)
    queue = key("q.fifo")
    await service.create_queue(queue, {"fifo": True}, {})
    for group in ("a", "b"):
        await service.send(queue, MessageDraft(group, group_id=group, deduplication_id=group))
    assert len(await service.receive(queue, max_messages=10)) == 2


# --- the total visibility limit ---------------------------------------------------------


async def test_visibility_extends_to_exactly_12_hours_after_the_receive_and_not_one_second_more(
    service: QueueService, clock: FakeClock
) -> None:
    await service.create_queue(key("q"), {}, {})
    await _fill(service, 1)
    [delivery] = await service.receive(key("q"))
    clock.advance(100)
    await service.change_visibility(
        key("q"), VisibilityChange(delivery.receipt, TWELVE_HOURS - 100)
    )
    clock.advance(1)
    with pytest.raises(InvalidParameter) as raised:
        await service.change_visibility(
            key("q"), VisibilityChange(delivery.receipt, TWELVE_HOURS - 100)
        )
    assert raised.value.parameter == "VisibilityTimeout"
    assert raised.value.reason == (
        "Total VisibilityTimeout for the message is beyond the limit [43200 seconds]"
    )


async def test_a_refused_extension_leaves_the_lease_as_it_was(
    service: QueueService, clock: FakeClock
) -> None:
    await service.create_queue(key("q"), {}, {})
    await _fill(service, 1)
    [delivery] = await service.receive(key("q"), visibility_timeout=30)
    clock.advance(10)
    with pytest.raises(InvalidParameter):
        await service.change_visibility(key("q"), VisibilityChange(delivery.receipt, TWELVE_HOURS))
    clock.advance(21)
    assert len(await service.receive(key("q"))) == 1


async def test_the_12_hours_count_from_the_receive_of_this_delivery(
    service: QueueService, clock: FakeClock
) -> None:
    # AWS: "12 hours from the time that Amazon SQS receives the ReceiveMessage request";
    # a redelivery starts a new lease with its own 12 hours.
    await service.create_queue(key("q"), {}, {})
    await _fill(service, 1)
    await service.receive(key("q"), visibility_timeout=10)
    clock.advance(TWELVE_HOURS)
    [again] = await service.receive(key("q"))
    await service.change_visibility(key("q"), VisibilityChange(again.receipt, TWELVE_HOURS))
    # The extension took: the message stays leased for the 12 hours, then returns.
    clock.advance(TWELVE_HOURS - 1)
    assert await service.receive(key("q")) == []
    clock.advance(2)
    assert [m.message.id for m in await service.receive(key("q"))] == [again.message.id]


async def test_a_batch_fails_only_the_changes_beyond_the_limit(
    service: QueueService, clock: FakeClock
) -> None:
    await service.create_queue(key("q"), {}, {})
    await _fill(service, 2)
    first, second = await service.receive(key("q"), max_messages=2)
    clock.advance(60)
    errors = await service.change_visibility_batch(
        key("q"),
        [
            VisibilityChange(first.receipt, TWELVE_HOURS - 60),
            VisibilityChange(second.receipt, TWELVE_HOURS - 59),
        ],
    )
    assert errors[0] is None
    assert isinstance(errors[1], InvalidParameter)


# --- the visibility floor ---------------------------------------------------------------


async def test_without_a_floor_short_leases_are_kept_and_nothing_is_noted(
    service: QueueService, clock: FakeClock
) -> None:
    await service.create_queue(key("q"), {}, {})
    await _fill(service, 1)
    noted = Adjustments()
    [delivery] = await service.receive(key("q"), visibility_timeout=5, adjustments=noted)
    assert delivery.visible_at == clock.time() + 5
    assert noted.visibility_floor is None


async def test_a_requested_lease_shorter_than_the_floor_is_raised_to_it(
    store: QueueStore, clock: FakeClock
) -> None:
    service = _service(store, clock, visibility_floor=60.0)
    await service.create_queue(key("q"), {}, {})
    await _fill(service, 1)
    noted = Adjustments()
    [delivery] = await service.receive(key("q"), visibility_timeout=5, adjustments=noted)
    assert delivery.visible_at == clock.time() + 60
    assert noted.visibility_floor == 60.0


async def test_a_queue_default_shorter_than_the_floor_is_raised_when_used(
    store: QueueStore, clock: FakeClock
) -> None:
    service = _service(store, clock, visibility_floor=60.0)
    await service.create_queue(key("q"), {"visibility_timeout": 10.0}, {})
    await _fill(service, 1)
    noted = Adjustments()
    [delivery] = await service.receive(key("q"), adjustments=noted)
    assert delivery.visible_at == clock.time() + 60
    assert noted.visibility_floor == 60.0
    # The queue keeps the default it was given (so CreateQueue stays idempotent).
    assert (await service.get_queue(key("q"))).config.visibility_timeout == 10.0


async def test_a_lease_at_or_above_the_floor_is_left_alone(
    store: QueueStore, clock: FakeClock
) -> None:
    service = _service(store, clock, visibility_floor=60.0)
    await service.create_queue(key("q"), {}, {})
    await _fill(service, 1)
    noted = Adjustments()
    [delivery] = await service.receive(key("q"), visibility_timeout=60, adjustments=noted)
    assert delivery.visible_at == clock.time() + 60
    assert noted.visibility_floor is None


async def test_a_visibility_change_below_the_floor_is_raised_to_it_even_a_release(
    store: QueueStore, clock: FakeClock
) -> None:
    service = _service(store, clock, visibility_floor=60.0)
    await service.create_queue(key("q"), {}, {})
    await _fill(service, 1)
    [delivery] = await service.receive(key("q"), visibility_timeout=120)
    noted = Adjustments()
    await service.change_visibility(key("q"), VisibilityChange(delivery.receipt, 0), noted)
    assert noted.visibility_floor == 60.0
    clock.advance(59)
    assert await service.receive(key("q")) == []
    clock.advance(1)
    assert len(await service.receive(key("q"))) == 1
