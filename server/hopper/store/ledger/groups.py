"""A ledger's FIFO group index: each message group's messages in the order
they arrived in the queue, so a receive finds every group's deliverable run without
walking the whole queue: O(groups + messages taken) instead of O(depth).

The index is kept on arrival only (a send, a dead letter's or a moved message's arrival:
`Queue.add`). Whatever takes a message away (delete, discard, expiry, the sweep,
dead-lettering or a move elsewhere) leaves its entry behind: an entry is current while
the queue's dict holds that very record, and a walk drops the stale entries it meets at
a group's head and passes over those it meets further in. So a group's entries are its
messages in the queue's dict order, which is send order, with stale ones among them.
"""

from __future__ import annotations

import heapq
from array import array
from collections.abc import Iterator
from typing import Protocol

from hopper.store.ledger.messages import Message
from hopper.store.ledger.shelf import Shelf

# A group's lists are cut once the dropped entries leading them are this many and at
# least half of them: dropping a head is O(1), amortised, and the memory comes back.
_COMPACT_AT = 64

# A group's run waiting to be walked: its head's visible_at and arrival (the order of
# runs), where the run starts and the entries it may take, and the group.
_Head = tuple[float, int, int, int, "Group"]


class Holder(Protocol):
    """What the index walks: a queue's messages by id, its retention rule and its index
    (store/ledger/queues.py's Queue, which holds the index; so this module needs no
    import of it)."""

    messages: Shelf

    def expired(self, message: Message, now: float) -> bool: ...

    def index(self) -> dict[str | None, Group]: ...


def current(queue: Holder, message: Message, now: float) -> bool:
    """Whether an entry's message is still in the queue. An expired one is not, and is
    dropped from the queue here, as `Queue.live` would drop it."""
    if queue.messages.get(message.stored.id) is not message:
        return False
    if queue.expired(message, now):
        del queue.messages[message.stored.id]
        return False
    return True


class Group:
    """One message group's entries from `start` on: its messages, and for each the
    number of its arrival in the queue (the dict's order, which breaks ties between
    groups' runs)."""

    __slots__ = ("arrivals", "messages", "start")

    def __init__(self) -> None:
        self.messages: list[Message] = []
        # Machine integers: 8 bytes an entry, where a list of ints holds 8 + 32.
        self.arrivals = array("q")
        self.start = 0

    def append(self, message: Message, arrival: int) -> None:
        self.messages.append(message)
        self.arrivals.append(arrival)

    def prune(self, queue: Holder, now: float) -> bool:
        """Drop the stale entries at the head; whether any entry is left. Messages of
        a group arrive in send order, so its expired messages are mostly at its head;
        one moved back in with an old send time is dropped where a walk meets it."""
        messages = self.messages
        start = self.start
        while start < len(messages) and not current(queue, messages[start], now):
            start += 1
        if start >= _COMPACT_AT and 2 * start >= len(messages):
            del messages[:start]
            del self.arrivals[:start]
            start = 0
        self.start = start
        return start < len(messages)

    def head(self, queue: Holder, now: float, skip: frozenset[str] | set[str]) -> int | None:
        """Where the group's deliverable run starts, or None: the group's first message
        (those in `skip` count as gone) is in flight or delayed, or there is none. Called
        right after `prune`, so the entry at `start` is current: a receive looks at each
        group's head once, mostly to find it in flight."""
        messages = self.messages
        start = self.start
        for index in range(start, len(messages)):
            message = messages[index]
            if message.stored.id in skip or (index > start and not current(queue, message, now)):
                continue
            return None if message.visible_at > now else index
        return None

    def run(
        self, queue: Holder, now: float, skip: frozenset[str] | set[str], start: int, end: int
    ) -> Iterator[tuple[int, Message]]:
        """The run from `start` as (arrival, message), up to the first message in
        flight or delayed, among the entries before `end`. The bound keeps out what
        arrives while the caller takes the run (its own dead letters), as a snapshot
        would; the lists only grow at their end while a run is walked."""
        for index in range(start, end):
            message = self.messages[index]
            if message.stored.id in skip or not current(queue, message, now):
                continue
            if message.visible_at > now:
                return
            yield self.arrivals[index], message


def _heads(queue: Holder, now: float, skip: frozenset[str] | set[str]) -> list[_Head]:
    """Every group's run head; groups left empty leave the index."""
    groups = queue.index()
    heads: list[_Head] = []
    for group_id, group in list(groups.items()):
        if not group.prune(queue, now):
            del groups[group_id]
            continue
        index = group.head(queue, now, skip)
        if index is not None:
            visible_at = group.messages[index].visible_at
            heads.append((visible_at, group.arrivals[index], index, len(group.messages), group))
    return heads


def fifo_runs(queue: Holder, now: float, skip: frozenset[str] | set[str]) -> Iterator[Message]:
    """A FIFO queue's deliverable runs, in the order AWS serves them. A group's run is its
    messages in sequence order from its oldest one up to, not including, the first in
    flight or delayed; so a message whose lease ended is deliverable again even while a
    later one of its group is in flight. Groups come in the order their run's first
    message became available: its visible_at, which is its send time (plus the queue's
    delay) if it was never received and the moment its lease ended otherwise; ties in
    the order of those first messages in the queue. (Messages in `skip` count as gone.)

    Lazy: the heads are found at the first step (what the caller then changes in one
    group's run leaves the others' as they were), and each run is walked only as far as
    the caller takes it."""
    heads = _heads(queue, now, skip)
    heapq.heapify(heads)
    while heads:
        _, _, start, end, group = heapq.heappop(heads)
        for _, message in group.run(queue, now, skip, start, end):
            yield message


def in_send_order(queue: Holder, now: float) -> Iterator[Message]:
    """The messages of the deliverable runs (as `fifo_runs` gives them) in the queue's
    send order, lazily: each run is in send order already, so a merge keeps it."""
    runs = [
        group.run(queue, now, frozenset(), start, end)
        for _, _, start, end, group in _heads(queue, now, frozenset())
    ]
    for _, message in heapq.merge(*runs, key=lambda entry: entry[0]):
        yield message
