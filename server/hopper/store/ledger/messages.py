"""A ledger's messages and FIFO receive attempts, and the delivery a message makes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from hopper.core.model import Delivery, MessageAttribute, StoredMessage

# Most messages carry no attributes: one shared, read-only empty map saves each a dict.
NO_ATTRIBUTES: Mapping[str, MessageAttribute] = MappingProxyType({})


@dataclass(slots=True)
class Message:
    stored: StoredMessage
    visible_at: float
    token: int = 0
    receive_count: int = 0
    # The receive count it brought into this queue from the queue that dead-lettered
    # it: its receive count goes along (AWS counts receives "across all queues"), and
    # this queue's maxReceiveCount counts only the receives made from it.
    carried_receive_count: int = 0
    first_received_at: float | None = None
    # The live deduplication key it holds (standard queues); a message dead-lettered or
    # moved arrives elsewhere as a new Message, without one.
    live_key: str | None = None
    # When the current delivery was made (the 12-hour total visibility counts from it).
    received_at: float | None = None

    def in_flight(self, now: float) -> bool:
        return self.receive_count > 0 and self.visible_at > now


@dataclass
class Attempt:
    """A FIFO receive made with a ReceiveRequestAttemptId: when, and per message it
    delivered, the token and the lease deadline it left the message with."""

    made_at: float
    entries: list[tuple[str, int, float]]


def delivery(message: Message) -> Delivery:
    """The message's current delivery, as a receive hands it out."""
    return Delivery(
        message=message.stored,
        token=message.token,
        receive_count=message.receive_count,
        first_received_at=message.first_received_at or 0.0,
        visible_at=message.visible_at,
    )
