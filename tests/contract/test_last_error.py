"""Store contract: a change of visibility with an error keeps it as the message's
last_error (Hopper.LastError), which goes along to the dead-letter queue."""

from __future__ import annotations

from hopper.core.clock import FakeClock
from hopper.core.model import ReceiptOutcome, VisibilityChange
from hopper.core.store import QueueStore

from .factories import make_dead_letter_pair, receive, receive_one, send


async def test_released_message_keeps_its_error_into_the_dead_letter_queue(
    store: QueueStore, clock: FakeClock
) -> None:
    source, target = await make_dead_letter_pair(store, clock, max_receive_count=2)
    await send(store, clock, source)
    first = await receive_one(store, clock, source)
    assert first.message.last_error is None
    for error, delivery in (("HTTP 500: boom", first), (None, None)):
        delivery = delivery or await receive_one(store, clock, source)
        change = VisibilityChange(delivery.receipt, 0, error=error)
        [result] = await store.change_visibility(
            source, [change], refuse_expired=False, now=clock.now()
        )
        assert result.outcome is ReceiptOutcome.OK
    # the second release named no error: the first one stays
    assert await receive(store, clock, source) == []
    [dead] = await receive(store, clock, target)
    assert dead.message.last_error == "HTTP 500: boom"
    [peeked] = await store.peek(target, limit=1, now=clock.now())
    assert peeked.message.last_error == "HTTP 500: boom"
