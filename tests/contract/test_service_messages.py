"""QueueService over every store: sending, batches, deleting and receipts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from hopper.core.clock import FakeClock
from hopper.core.errors import (
    BatchTooLong,
    InvalidParameter,
    MessageNotAvailable,
    MessageTooLong,
    MissingParameter,
    ReceiptExpired,
    StaleReceipt,
)
from hopper.core.model import (
    MessageAttribute,
    MessageDraft,
    NewMessage,
    Receipt,
    SendResult,
    VisibilityChange,
)
from hopper.core.service import QueueService
from hopper.core.store import QueueStore

from .factories import key


class CountingStore:
    """Delegates to a store and records each send call's batch."""

    def __init__(self, store: QueueStore) -> None:
        self._store = store
        self.sends: list[list[str]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    async def send(
        self,
        key: Any,
        messages: Sequence[NewMessage],
        *,
        now: float | None,
        max_depth: int | None = None,
    ) -> list[SendResult]:
        self.sends.append([m.body for m in messages])
        return await self._store.send(key, messages, now=now, max_depth=max_depth)


async def test_send_of_exactly_the_maximum_size_passes_and_one_more_byte_fails(
    service: QueueService,
) -> None:
    await service.create_queue(key("q"), {"maximum_message_size": 1024}, {})
    await service.send(key("q"), MessageDraft("x" * 1024))
    with pytest.raises(MessageTooLong):
        await service.send(key("q"), MessageDraft("x" * 1025))


async def test_send_limits_attributes_to_ten(service: QueueService) -> None:
    await service.create_queue(key("q"), {}, {})
    ten = {f"a{i}": MessageAttribute("String", string_value="v") for i in range(10)}
    await service.send(key("q"), MessageDraft("x", attributes=ten))
    eleven = {**ten, "a10": MessageAttribute("String", string_value="v")}
    with pytest.raises(InvalidParameter):
        await service.send(key("q"), MessageDraft("x", attributes=eleven))


async def test_send_limits_delay_to_900_seconds(service: QueueService, clock: FakeClock) -> None:
    await service.create_queue(key("q"), {}, {})
    await service.send(key("q"), MessageDraft("x", delay=900))
    with pytest.raises(InvalidParameter):
        await service.send(key("q"), MessageDraft("x", delay=901))
    assert (await service.queue_stats(key("q"))).delayed == 1
    clock.advance(900)
    assert len(await service.receive(key("q"))) == 1


async def test_send_uses_the_queue_delay_by_default(service: QueueService) -> None:
    await service.create_queue(key("q"), {"delay_seconds": 10.0}, {})
    await service.send(key("q"), MessageDraft("x"))
    await service.send(key("q"), MessageDraft("y", delay=0))
    assert [d.message.body for d in await service.receive(key("q"), max_messages=10)] == ["y"]


async def test_fifo_send_needs_a_group_id(service: QueueService) -> None:
    await service.create_queue(key("q.fifo"), {"fifo": True}, {})
    with pytest.raises(MissingParameter):
        await service.send(key("q.fifo"), MessageDraft("x", deduplication_id="d"))


async def test_fifo_content_based_dedup_drops_a_repeated_body(service: QueueService) -> None:
    await service.create_queue(
        key("q.fifo"), {"fifo": True, "content_based_deduplication": True}, {}
    )
    first = await service.send(key("q.fifo"), MessageDraft("same", group_id="g"))
    again = await service.send(key("q.fifo"), MessageDraft("same", group_id="g"))
    assert again.duplicate and again.message_id == first.message_id


async def test_send_batch_sends_the_valid_entries_in_one_store_call(
    store: QueueStore, clock: FakeClock
) -> None:
    counting = CountingStore(store)
    service = QueueService(counting, clock=clock)  # type: ignore[arg-type]
    await service.create_queue(key("q"), {}, {})
    results = await service.send_batch(
        key("q"), [MessageDraft("a"), MessageDraft(""), MessageDraft("c", delay=901),
                   MessageDraft("d")]
    )
    assert counting.sends == [["a", "d"]]
    assert isinstance(results[0], SendResult) and isinstance(results[3], SendResult)
    assert isinstance(results[1], MissingParameter)
    assert isinstance(results[2], InvalidParameter)
    received = await service.receive(key("q"), max_messages=10)
    assert sorted(d.message.body for d in received) == ["a", "d"]


async def test_send_batch_of_only_invalid_entries_makes_no_store_call(
    store: QueueStore, clock: FakeClock
) -> None:
    counting = CountingStore(store)
    service = QueueService(counting, clock=clock)  # type: ignore[arg-type]
    await service.create_queue(key("q"), {}, {})
    [result] = await service.send_batch(key("q"), [MessageDraft("")])
    assert isinstance(result, MissingParameter)
    assert counting.sends == []


async def test_send_batch_over_1_mib_in_total_fails_whole(service: QueueService) -> None:
    await service.create_queue(key("q"), {}, {})
    exactly = [MessageDraft("x" * 524_288), MessageDraft("y" * 524_288)]
    assert len(await service.send_batch(key("q"), exactly)) == 2
    with pytest.raises(BatchTooLong) as caught:
        await service.send_batch(key("q"), [*exactly[:1], MessageDraft("y" * 524_289)])
    assert (caught.value.size, caught.value.limit) == (1_048_577, 1_048_576)


async def test_delete_of_a_message_already_gone_succeeds(
    service: QueueService, clock: FakeClock
) -> None:
    await service.create_queue(key("q"), {}, {})
    await service.send(key("q"), MessageDraft("x"))
    [delivery] = await service.receive(key("q"), visibility_timeout=5)
    await service.delete(key("q"), delivery.receipt)
    # the second delete of the same receipt answers as the first (no error raised)
    await service.delete(key("q"), delivery.receipt)
    # and the message is gone: nothing left, nothing to receive once its lease would end
    stats = await service.queue_stats(key("q"))
    assert (stats.visible, stats.in_flight, stats.delayed) == (0, 0, 0)
    clock.advance(5)
    assert await service.receive(key("q")) == []


async def test_delete_with_a_superseded_receipt_raises_stale_receipt(
    service: QueueService, clock: FakeClock
) -> None:
    await service.create_queue(key("q"), {}, {})
    await service.send(key("q"), MessageDraft("x"))
    [old] = await service.receive(key("q"), visibility_timeout=1)
    clock.advance(1)
    [new] = await service.receive(key("q"))
    with pytest.raises(StaleReceipt) as caught:
        await service.delete(key("q"), old.receipt)
    assert (caught.value.receipt, caught.value.current) == (old.receipt, new.token)
    with pytest.raises(StaleReceipt):
        await service.change_visibility(key("q"), VisibilityChange(old.receipt, 0))
    await service.delete(key("q"), new.receipt)


async def test_standard_delete_with_an_expired_receipt_deletes(
    service: QueueService, clock: FakeClock
) -> None:
    await service.create_queue(key("q"), {}, {})
    await service.send(key("q"), MessageDraft("x"))
    [delivery] = await service.receive(key("q"), visibility_timeout=1)
    clock.advance(5)
    await service.delete(key("q"), delivery.receipt)
    assert await service.receive(key("q")) == []


async def test_fifo_delete_with_an_expired_receipt_raises_receipt_expired(
    service: QueueService, clock: FakeClock
) -> None:
    await service.create_queue(key("q.fifo"), {"fifo": True}, {})
    await service.send(key("q.fifo"), MessageDraft("x", group_id="g", deduplication_id="d"))
    [delivery] = await service.receive(key("q.fifo"), visibility_timeout=1)
    clock.advance(1)
    with pytest.raises(ReceiptExpired):
        await service.delete(key("q.fifo"), delivery.receipt)
    with pytest.raises(ReceiptExpired):
        await service.change_visibility(key("q.fifo"), VisibilityChange(delivery.receipt, 5))


async def test_change_visibility_of_a_gone_message_raises_message_not_available(
    service: QueueService,
) -> None:
    await service.create_queue(key("q"), {}, {})
    await service.send(key("q"), MessageDraft("x"))
    [delivery] = await service.receive(key("q"))
    await service.delete(key("q"), delivery.receipt)
    with pytest.raises(MessageNotAvailable):
        await service.change_visibility(key("q"), VisibilityChange(delivery.receipt, 5))


@pytest.mark.parametrize("timeout", [-1, 43_201])
async def test_change_visibility_timeout_is_bounded_0_to_43200(
    service: QueueService, timeout: float
) -> None:
    await service.create_queue(key("q"), {}, {})
    await service.send(key("q"), MessageDraft("x"))
    [delivery] = await service.receive(key("q"))
    with pytest.raises(InvalidParameter) as caught:
        await service.change_visibility(key("q"), VisibilityChange(delivery.receipt, timeout))
    assert caught.value.reason == "Must be between 0 and 43200, if provided."
    await service.change_visibility(key("q"), VisibilityChange(delivery.receipt, 43_200))


async def test_batches_answer_per_entry_in_order(service: QueueService, clock: FakeClock) -> None:
    await service.create_queue(key("q"), {}, {})
    await service.send_batch(key("q"), [MessageDraft("a"), MessageDraft("b")])
    a, b = await service.receive(key("q"), max_messages=10, visibility_timeout=1)
    await service.change_visibility(key("q"), VisibilityChange(a.receipt, 100))
    clock.advance(1)
    [b_again] = await service.receive(key("q"), max_messages=10)
    assert b_again.message.id == b.message.id
    changes = await service.change_visibility_batch(
        key("q"), [VisibilityChange(a.receipt, 5), VisibilityChange(b.receipt, 5),
                   VisibilityChange(a.receipt, -1)]
    )
    assert changes[0] is None
    assert isinstance(changes[1], StaleReceipt) and isinstance(changes[2], InvalidParameter)
    deletes = await service.delete_batch(
        key("q"), [b.receipt, b_again.receipt, Receipt("unknown", 1)]
    )
    assert isinstance(deletes[0], StaleReceipt)
    assert deletes[1:] == [None, None]
