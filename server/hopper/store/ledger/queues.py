"""A ledger's queue: its record, its messages in send order, and what it keeps to decide
deduplication, FIFO receive attempts and group order; with the retention, visibility
and room rules a store applies to it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from hopper.core.model import QueueRecord, SendResult
from hopper.store.ledger.groups import Group
from hopper.store.ledger.messages import Attempt, Message
from hopper.store.ledger.shelf import Shelf


@dataclass
class Queue:
    record: QueueRecord
    # By id; arrival order is send order (and sequence order on FIFO queues).
    messages: Shelf = field(default_factory=Shelf)
    # FIFO deduplication key (see NewMessage.window_key) -> (first send time, the
    # original's result)
    sent_ids: dict[str, tuple[float, SendResult]] = field(default_factory=dict)
    # live deduplication key -> the id of the message that took it (standard queues);
    # the key is held while that message is still here and still holds it
    live_keys: dict[str, str] = field(default_factory=dict)
    # whether a message with a group id was ever sent here (a standard queue pays for
    # fair-queue accounting only then)
    grouped: bool = False
    last_sequence: int = 0
    last_purged_at: float | None = None
    # FIFO: ReceiveRequestAttemptId -> the receive it names, within its window
    attempts: dict[str, Attempt] = field(default_factory=dict)
    # FIFO: group id -> its messages in arrival order (store/ledger/groups.py). Built by
    # the first walk that needs it (None until then, and again after a purge), then kept
    # by `add`; so a standard queue, or a ledger the JetStream store decodes, pays
    # nothing until a FIFO receive looks.
    groups: dict[str | None, Group] | None = None
    arrivals: int = 0

    def add(self, message: Message) -> None:
        """Put a message at the queue's tail. Every arrival comes through here (a send,
        a dead letter, a moved message), so the group index stays whole. Its id is new
        to the queue: a message is in one queue at a time, and leaves before it comes
        back."""
        self.messages.add(message)
        if self.groups is not None:
            self._index(self.groups, message)

    def put(self, message_id: str, body: str, sent_at: float, visible_at: float) -> bool:
        """Put a message with nothing but its body at the tail, packed (shelf.py); False
        (nothing put) when it must be a record: its id has not the packed form, or the
        queue is FIFO (the group index holds records)."""
        if self.record.config.fifo or self.groups is not None:
            return False
        return self.messages.put(message_id, body, sent_at, visible_at)

    def index(self) -> dict[str | None, Group]:
        """The group index, built from the messages on first use."""
        if self.groups is None:
            self.groups = {}
            # Through `get`: the index holds records (a walk's copies would be stale).
            for message_id in list(self.messages):
                self._index(self.groups, self.messages[message_id])
        return self.groups

    def _index(self, groups: dict[str | None, Group], message: Message) -> None:
        group = groups.get(message.stored.group_id)
        if group is None:
            group = groups[message.stored.group_id] = Group()
        self.arrivals += 1
        group.append(message, self.arrivals)

    def clear(self) -> None:
        self.messages.clear()
        self.groups = None

    def expired(self, message: Message, now: float) -> bool:
        return message.stored.sent_at <= self.horizon(now)

    def horizon(self, now: float) -> float:
        """A message sent at or before this is past the retention period."""
        return now - self.record.config.message_retention_period

    def live(self, now: float) -> Shelf:
        """The messages, after dropping those past the retention period."""
        self.messages.expire(self.horizon(now))
        return self.messages

    def find(self, message_id: str, now: float) -> Message | None:
        """The live message of this id, or None (dropping it if it has expired)."""
        message = self.messages.get(message_id)
        if message is not None and self.expired(message, now):
            del self.messages[message_id]
            return None
        return message

    def visible(self, now: float) -> Iterator[Message]:
        """The visible messages in send order, as records (the caller may claim them),
        those past retention left for `find` or the sweep to drop (this walk may not
        remove what it walks)."""
        return self.messages.visible(now, self.horizon(now))

    def room(self, max_depth: int, wanted: int, now: float) -> int:
        """How many more messages the queue takes under its depth ceiling. What it holds
        counts expired messages not yet dropped; dropping them walks the whole queue, so
        that is done only when the count says the ceiling is near."""
        depth = len(self.messages)
        if depth + wanted > max_depth:
            depth = len(self.live(now))
        return max(max_depth - depth, 0)
