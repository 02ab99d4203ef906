"""A queue's messages in send order, packed. A stored message is most of a ledger's
memory, and most messages wait in a queue as they were sent: an id, a body, a send
time. Such a message is kept in four machine words besides its body:

- its id's last 12 hex digits as a number, in an array of keys. That is new_id's form
  (core/ids.py: a process's random prefix, then a count), so an id that begins as the
  queue's first packed one did and counts above every key before it keeps the keys
  sorted, and is found again by bisection;
- its send time and the time it becomes visible, in two arrays of doubles;
- its body, in the list of slots.

Every other message is a record (store/ledger/messages.py's Message) in its slot and
in a dict by id: a packed message becomes one when `get` hands it out (a receive, a
discard: whatever may change it), and a message that arrives with more than a body or
with an id of another form is one from the start. So what a delete or a visibility
change looks up was received, and is found in the dict as before; only a message
never received is found by bisection (a stale receipt, a discard).

A removed record stays in its slot, which the dict no longer names; a removed packed
message leaves its slot empty. Slots are cut once the empty ones are many and at least
half: at the head by slicing (a queue drained in order), else by rebuilding the arrays,
so a removal costs O(1) amortised.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterator

from hopper.core.model import StoredMessage
from hopper.store.ledger.messages import NO_ATTRIBUTES, Message

_ID_LENGTH = 36
_PREFIX_LENGTH = 24  # a UUID's text up to its last group of 12 hex digits
# Cut once this many slots are empty, and at least half of them.
_CUT_AT = 64


class Shelf:
    """The messages of one queue by id, in the order they arrived (a dict's interface
    for the ledger's readers: `get`, `in`, `del`, `len`, `values`, `items`, iteration
    over ids). `values` and `items` hand a packed message out as a copy: change a
    message only after `get` (or `visible`) gave it, which keeps it as a record."""

    __slots__ = (
        "_cuts",
        "_head",
        "_keys",
        "_last",
        "_ordered",
        "_packed",
        "_prefix",
        "_records",
        "_sent",
        "_slots",
        "_visible",
    )

    def __init__(self) -> None:
        self._keys = array("Q")
        self._sent = array("d")
        self._visible = array("d")
        self._slots: list[str | Message | None] = []
        self._records: dict[str, Message] = {}
        self._packed = 0
        # Every slot before it is empty.
        self._head = 0
        self._prefix = ""
        # The greatest key given; a packed id must count above it.
        self._last = -1
        # Counts the cuts, which move slots: a walk they would derail stops instead.
        self._cuts = 0
        # Whether the dict of records holds them in arrival order (a promoted record is
        # put in it late): see `_in_order`.
        self._ordered = True

    # --- arrivals -----------------------------------------------------------------------

    def put(self, message_id: str, body: str, sent_at: float, visible_at: float) -> bool:
        """Keep a message never received, with nothing but its body, packed at the tail;
        False (nothing kept) when its id has not the packed form: the caller adds a
        record instead."""
        if not self._prefix and len(message_id) == _ID_LENGTH:
            self._prefix = message_id[:_PREFIX_LENGTH]
        key = self._key(message_id)
        if key is None or key <= self._last:
            return False
        self._append(key, body, sent_at, visible_at)
        self._packed += 1
        return True

    def add(self, message: Message) -> None:
        """Keep a record at the tail. Its id is not in the shelf."""
        key = self._key(message.stored.id)
        if key is None or key <= self._last:
            # Its key only keeps the array sorted: the dict finds it.
            key = max(self._last, 0)
        self._append(key, message, 0.0, 0.0)
        self._records[message.stored.id] = message

    def __setitem__(self, message_id: str, message: Message) -> None:
        """As `add` (at the tail), in place of any message of that id."""
        if message_id != message.stored.id:
            raise ValueError(f"message {message.stored.id} kept as {message_id}")
        if message_id in self:
            del self[message_id]
        self.add(message)

    def _append(self, key: int, slot: str | Message, sent_at: float, visible_at: float) -> None:
        self._keys.append(key)
        self._sent.append(sent_at)
        self._visible.append(visible_at)
        self._slots.append(slot)
        self._last = key

    # --- look-ups -----------------------------------------------------------------------

    def get(self, message_id: str) -> Message | None:
        """The message of this id as a record, or None."""
        message = self._records.get(message_id)
        if message is None:
            index = self._find(message_id)
            if index is not None:
                message = self._promote(index)
        return message

    def __getitem__(self, message_id: str) -> Message:
        message = self.get(message_id)
        if message is None:
            raise KeyError(message_id)
        return message

    def __contains__(self, message_id: object) -> bool:
        if not isinstance(message_id, str):
            return False
        return message_id in self._records or self._find(message_id) is not None

    def __len__(self) -> int:
        return len(self._records) + self._packed

    def _key(self, message_id: str) -> int | None:
        """The id's key when it has the packed form, else None."""
        if len(message_id) != _ID_LENGTH or not self._prefix:
            return None
        if not message_id.startswith(self._prefix):
            return None
        tail = message_id[_PREFIX_LENGTH:]
        try:
            key = int(tail, 16)
        except ValueError:
            return None
        # int() also takes capitals, a sign, "0x" or underscores: only new_id's own
        # spelling of the number is the id it stands for.
        return key if "%012x" % key == tail else None  # noqa: UP031 - as core/ids.py's

    def _find(self, message_id: str) -> int | None:
        """The slot of the packed message of this id, or None. A packed key is greater
        than every key before it, so among equal keys it comes first."""
        key = self._key(message_id)
        if key is None:
            return None
        index = bisect_left(self._keys, key, self._head)
        found = index < len(self._keys) and self._keys[index] == key
        return index if found and isinstance(self._slots[index], str) else None

    def _copy(self, index: int) -> Message:
        """The packed message of slot `index` as a record (not kept)."""
        body = self._slots[index]
        if not isinstance(body, str):
            raise TypeError(f"slot {index} holds no packed message")
        message_id = self._prefix + "%012x" % self._keys[index]  # noqa: UP031
        stored = StoredMessage(message_id, body, NO_ATTRIBUTES, None, self._sent[index])
        return Message(stored, self._visible[index])

    def _promote(self, index: int) -> Message:
        message = self._copy(index)
        self._slots[index] = message
        self._records[message.stored.id] = message
        self._packed -= 1
        self._ordered = False
        return message

    def _holds(self, slot: str | Message | None) -> bool:
        if slot is None or isinstance(slot, str):
            return slot is not None
        return self._records.get(slot.stored.id) is slot

    # --- walks --------------------------------------------------------------------------

    def _in_order(self) -> bool:
        """Whether every message is a record and the dict holds them in arrival order,
        so a walk goes over the dict, not the slots: a JetStream step walks its ledger
        (all records) several times, and the slots' walk costs three times the dict's
        (0.3 against 0.1 us a message; `listed`'s copy of the dict 0.005). The dict is
        put back in order once no message is packed."""
        if self._packed:
            return False
        if not self._ordered:
            self._records = {slot.stored.id: slot for slot in self._slot_values()}
            self._ordered = True
        return True

    def _records_walk(self) -> Iterator[Message]:
        """The records in arrival order (when `_in_order`), as the slots' walk hands
        them: what arrives meanwhile is left out, what leaves is skipped, a cut stops."""
        cuts = self._cuts
        for message in list(self._records.values()):
            if cuts != self._cuts:
                raise RuntimeError("a queue's messages were cut during a walk")
            if self._records.get(message.stored.id) is message:
                yield message

    def _indexes(self) -> Iterator[int]:
        """The slots holding a message, in arrival order. What arrives meanwhile is left
        out; a cut meanwhile stops the walk (as a dict changed under a walk does)."""
        cuts = self._cuts
        slots = self._slots
        for index in range(self._head, len(slots)):
            if cuts != self._cuts:
                raise RuntimeError("a queue's messages were cut during a walk")
            if self._holds(slots[index]):
                yield index

    def values(self) -> Iterator[Message]:
        """The messages in arrival order, a packed one as a copy."""
        return self._records_walk() if self._in_order() else self._slot_values()

    def _slot_values(self) -> Iterator[Message]:
        slots = self._slots
        for index in self._indexes():
            slot = slots[index]
            yield slot if isinstance(slot, Message) else self._copy(index)

    def listed(self) -> list[Message]:
        """The messages in arrival order, a packed one as a copy: `values` as a list, for
        a reader that changes nothing while it reads (a copy of the dict when
        `_in_order`)."""
        return list(self._records.values()) if self._in_order() else list(self._slot_values())

    def ids(self) -> list[str]:
        """The ids in arrival order, as a list (as `listed`)."""
        return list(self._records) if self._in_order() else list(self._slot_ids())

    def items(self) -> Iterator[tuple[str, Message]]:
        for message in self.values():
            yield message.stored.id, message

    def __iter__(self) -> Iterator[str]:
        if self._in_order():
            return (message.stored.id for message in self._records_walk())
        return self._slot_ids()

    def _slot_ids(self) -> Iterator[str]:
        slots = self._slots
        for index in self._indexes():
            slot = slots[index]
            if isinstance(slot, Message):
                yield slot.stored.id
            else:
                yield self._prefix + "%012x" % self._keys[index]  # noqa: UP031

    def records(self) -> Iterator[Message]:
        """The messages kept as records, in no particular order."""
        return iter(self._records.values())

    def packed(self) -> Iterator[tuple[float, float]]:
        """The packed messages' send and visibility times, in no particular order."""
        slots, sent, visible = self._slots, self._sent, self._visible
        for index in range(self._head, len(slots)):
            if isinstance(slots[index], str):
                yield sent[index], visible[index]

    def visible(self, now: float, horizon: float) -> Iterator[Message]:
        """The messages visible at `now` and sent after `horizon`, in arrival order, each
        as a record: what a standard queue's receive takes."""
        if self._in_order():
            return self._visible_records(now, horizon)
        return self._visible_slots(now, horizon)

    def _visible_records(self, now: float, horizon: float) -> Iterator[Message]:
        """`visible` over the dict (when `_in_order`), as `_records_walk` walks it: one
        generator, and a message not visible costs two comparisons (a receive passes
        every message in flight before it reaches one)."""
        cuts = self._cuts
        for message in list(self._records.values()):
            if message.visible_at <= now and message.stored.sent_at > horizon:
                if cuts != self._cuts:
                    raise RuntimeError("a queue's messages were cut during a walk")
                if self._records.get(message.stored.id) is message:
                    yield message

    def _visible_slots(self, now: float, horizon: float) -> Iterator[Message]:
        """`visible` over the slots. The walk starts past the empty slots at the head,
        and leaves them behind for good."""
        slots, sent, visible = self._slots, self._sent, self._visible
        head = self._head
        while head < len(slots) and not self._holds(slots[head]):
            head += 1
        self._head = head
        cuts = self._cuts
        for index in range(head, len(slots)):
            if cuts != self._cuts:
                raise RuntimeError("a queue's messages were cut during a walk")
            slot = slots[index]
            if isinstance(slot, str):
                if visible[index] <= now and sent[index] > horizon:
                    yield self._promote(index)
            elif (
                isinstance(slot, Message)
                and slot.visible_at <= now
                and slot.stored.sent_at > horizon
                and self._holds(slot)
            ):
                yield slot

    # --- removals -----------------------------------------------------------------------

    def __delitem__(self, message_id: str) -> None:
        if self._records.pop(message_id, None) is None:
            index = self._find(message_id)
            if index is None:
                raise KeyError(message_id)
            self._slots[index] = None
            self._packed -= 1
        self._tidy()

    def expire(self, horizon: float, limit: int | None = None) -> int:
        """Remove the messages sent at or before `horizon` (up to `limit` of them, the
        earliest arrivals first); how many."""
        slots, sent = self._slots, self._sent
        dropped = 0
        for index in range(self._head, len(slots)):
            if limit is not None and dropped >= limit:
                break
            slot = slots[index]
            if isinstance(slot, str):
                if sent[index] <= horizon:
                    slots[index] = None
                    self._packed -= 1
                    dropped += 1
            elif isinstance(slot, Message) and slot.stored.sent_at <= horizon and self._holds(slot):
                del self._records[slot.stored.id]
                dropped += 1
        if dropped:
            self._tidy()
        return dropped

    def clear(self) -> None:
        self._keys = array("Q")
        self._sent = array("d")
        self._visible = array("d")
        self._slots = []
        self._records.clear()
        self._packed = 0
        self._head = 0
        self._cuts += 1
        self._ordered = True

    def _tidy(self) -> None:
        slots = len(self._slots)
        empty = slots - len(self._records) - self._packed
        if empty >= _CUT_AT and 2 * empty >= slots:
            self._cut()

    def _cut(self) -> None:
        """Drop the empty slots: by slicing when they are all at the head, else by
        rebuilding the arrays from the slots that hold a message."""
        self._cuts += 1
        slots = self._slots
        head = self._head
        while head < len(slots) and not self._holds(slots[head]):
            head += 1
        self._head = 0
        if len(slots) - head == len(self):
            del slots[:head]
            del self._keys[:head]
            del self._sent[:head]
            del self._visible[:head]
            return
        kept = [index for index in range(head, len(slots)) if self._holds(slots[index])]
        self._keys = array("Q", [self._keys[index] for index in kept])
        self._sent = array("d", [self._sent[index] for index in kept])
        self._visible = array("d", [self._visible[index] for index in kept])
        self._slots = [slots[index] for index in kept]
