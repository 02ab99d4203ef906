"""The JetStream store's values: a queue's ledger, its record, a message's body, move tasks.

A ledger is one queue's per-message state (leases, tokens, receive counts, deduplication
keys, receive attempts) as the store model (`store/ledger/`) holds it, encoded as
compressed JSON so that one key-value entry holds it. Bodies are not in the ledger: they
live in a stream and the ledger names each message's body by stream sequence. Loading a
ledger gives the model placeholder messages (no body, no attributes); `Bodies` fills the
real ones in for what leaves the store.
"""

from __future__ import annotations

import base64
import dataclasses
import zlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson

from hopper.core.dispatch_targets import DispatchTarget
from hopper.core.model import (
    DeadLetterRule,
    Delivery,
    MessageAttribute,
    MoveTask,
    MoveTaskStatus,
    QueueConfig,
    QueueKey,
    QueueRecord,
    SendResult,
    StoredMessage,
)
from hopper.core.retries import RetryPolicy
from hopper.store.ledger import NO_ATTRIBUTES, Attempt, Message, Queue

# A message's body, attributes and trace header: what a ledger leaves out.
Body = tuple[str, Mapping[str, MessageAttribute], str | None]

# A write claims at most this many deliveries (a receive takes 10 at most).
TOKENS_PER_WRITE = 1024


@dataclasses.dataclass
class Ledger:
    """A queue as the model holds it, plus what only the JetStream store keeps: the body
    sequence of each message."""

    queue: Queue
    bodies: dict[str, int]
    # The last sequence of the queue's backlog taken into the ledger: what lies beyond
    # it on the backlog subject waits, visible, never received (see `backlog.py`).
    cursor: int = 0
    # The messages whose body lies on the queue's backlog subject (absorbed from it).
    absorbed: set[str] = dataclasses.field(default_factory=set)


def token(pending: int, revision: int) -> int:
    """The fencing token of a delivery claimed by the ledger write of `revision`.

    A write cannot know its own revision, so it stores the deliveries it makes as pending
    tokens -1, -2, ...; the revision the bucket gave that write (a bucket-wide, strictly
    increasing sequence issued by JetStream) turns them into tokens. Every later write
    first read the ledger at exactly that revision (compare-and-set), so it resolves
    them before anything else. Tokens thus increase store-wide, in commit order."""
    return pending if pending >= 0 else revision * TOKENS_PER_WRITE + (-pending - 1)


# --- queue records ------------------------------------------------------------------


def encode_record(record: QueueRecord, incarnation: str) -> bytes:
    config = record.config
    rule = config.dead_letter
    return orjson.dumps(
        {
            "incarnation": incarnation,
            "account": record.key.account,
            "name": record.key.name,
            "created_at": record.created_at,
            "last_modified_at": record.last_modified_at,
            "tags": dict(record.tags),
            "config": {
                **{f.name: getattr(config, f.name) for f in dataclasses.fields(config)},
                "extra": dict(config.extra),
                "dead_letter": None
                if rule is None
                else [rule.target.account, rule.target.name, rule.max_receive_count],
            },
        }
    )


def decode_record(data: bytes) -> tuple[QueueRecord, str]:
    raw = orjson.loads(data)
    config: dict[str, Any] = dict(raw["config"])
    rule = config.pop("dead_letter")
    dead_letter = None if rule is None else DeadLetterRule(QueueKey(rule[0], rule[1]), rule[2])
    # orjson wrote the retry policy as an object of its fields
    policy = config.pop("retry_policy", None)
    config["retry_policy"] = None if policy is None else RetryPolicy(**policy)
    target = config.pop("dispatch", None)
    config["dispatch"] = None if target is None else DispatchTarget(**target)
    record = QueueRecord(
        key=QueueKey(raw["account"], raw["name"]),
        config=QueueConfig(**config, dead_letter=dead_letter),
        created_at=raw["created_at"],
        last_modified_at=raw["last_modified_at"],
        tags=raw["tags"],
    )
    return record, raw["incarnation"]


# --- ledgers --------------------------------------------------------------------------


def encode_ledger(ledger: Ledger, *, window: float, now: float) -> bytes:
    """The ledger as JSON (`pack` compresses it for the bucket): a write is skipped when
    this equals what was loaded."""
    queue = ledger.queue
    bodies = ledger.bodies
    messages = [_encode_message(m, bodies[m.stored.id]) for m in queue.messages.listed()]
    # FIFO deduplication entries outlive their window only until the next write.
    sent_ids = {
        key: [at, result.message_id, result.sequence_number]
        for key, (at, result) in queue.sent_ids.items()
        if now - at < window
    }
    attempts = {a: [t.made_at, t.entries] for a, t in queue.attempts.items()}
    return orjson.dumps(
        {
            "messages": messages,
            "sent_ids": sent_ids,
            "live_keys": queue.live_keys,
            "grouped": queue.grouped,
            "last_sequence": queue.last_sequence,
            "last_purged_at": queue.last_purged_at,
            "attempts": attempts,
            "cursor": ledger.cursor,
            "absorbed": sorted(ledger.absorbed),
        }
    )


def pack(data: bytes) -> bytes:
    return zlib.compress(data, 1)


def unpack(data: bytes | None) -> bytes | None:
    return zlib.decompress(data) if data else None


def decode_ledger(data: bytes | None, record: QueueRecord, revision: int) -> Ledger:
    """A ledger from its JSON read at `revision` (None: a queue nothing was written to
    yet), pending tokens resolved."""
    queue = Queue(record)
    if not data:
        return Ledger(queue, {})
    raw = orjson.loads(data)
    bodies = {}
    for entry in raw["messages"]:
        message, body_seq = _decode_message(entry)
        queue.messages[message.stored.id] = message
        bodies[message.stored.id] = body_seq
    queue.sent_ids = {
        key: (at, SendResult(mid, sequence_number=seq))
        for key, (at, mid, seq) in raw["sent_ids"].items()
    }
    queue.live_keys = raw["live_keys"]
    queue.grouped = raw["grouped"]
    queue.last_sequence = raw["last_sequence"]
    queue.last_purged_at = raw["last_purged_at"]
    queue.attempts = {
        a: Attempt(made_at, [tuple(entry) for entry in entries])
        for a, (made_at, entries) in raw["attempts"].items()
    }
    ledger = Ledger(queue, bodies, raw.get("cursor", 0), set(raw.get("absorbed", ())))
    resolve(ledger, revision)
    return ledger


def resolve(ledger: Ledger, revision: int) -> bool:
    """Turn the pending tokens of the write that got `revision` into tokens; whether
    there were any."""
    found = False
    for message in ledger.queue.messages.listed():
        if message.token < 0:
            message.token = token(message.token, revision)
            found = True
    for attempt in ledger.queue.attempts.values():
        if any(t < 0 for _, t, _ in attempt.entries):
            attempt.entries = [(mid, token(t, revision), at) for mid, t, at in attempt.entries]
            found = True
    return found


def _encode_message(m: Message, body_seq: int) -> list[Any]:
    s = m.stored
    source = s.dead_letter_source
    return [
        s.id,
        body_seq,
        s.sent_at,
        s.group_id,
        s.deduplication_id,
        s.sequence_number,
        None if source is None else [source.account, source.name],
        m.visible_at,
        m.token,
        m.receive_count,
        m.carried_receive_count,
        m.first_received_at,
        m.live_key,
        m.received_at,
        m.retry_delay,
        s.last_error,
    ]


def _decode_message(entry: list[Any]) -> tuple[Message, int]:
    (mid, body_seq, sent_at, group, dedup, sequence, source) = entry[:7]
    (visible_at, token, count, carried, first, live_key, received_at) = entry[7:14]
    # ledgers written before Hopper.RetryPolicy and Hopper.LastError lack the two
    retry_delay = entry[14] if len(entry) > 14 else 0.0
    last_error = entry[15] if len(entry) > 15 else None
    stored = StoredMessage(
        id=mid,
        body="",
        attributes=NO_ATTRIBUTES,
        trace_header=None,
        sent_at=sent_at,
        group_id=group,
        deduplication_id=dedup,
        sequence_number=sequence,
        dead_letter_source=None if source is None else QueueKey(source[0], source[1]),
        last_error=last_error,
    )
    message = Message(
        stored,
        visible_at=visible_at,
        token=token,
        receive_count=count,
        carried_receive_count=carried,
        first_received_at=first,
        live_key=live_key,
        received_at=received_at,
        retry_delay=retry_delay,
    )
    return message, body_seq


# --- bodies ---------------------------------------------------------------------------


def _body_fields(stored: StoredMessage) -> dict[str, Any]:
    attributes = {
        name: [
            a.data_type,
            a.string_value,
            None if a.binary_value is None else base64.b64encode(a.binary_value).decode(),
        ]
        for name, a in stored.attributes.items()
    }
    return {"body": stored.body, "attributes": attributes, "trace": stored.trace_header}


def encode_body(stored: StoredMessage) -> bytes:
    return orjson.dumps(_body_fields(stored))


# A body is named by a key: its stream sequence times SLOTS plus its place in that
# stream message (a backlog entry holds a whole send's messages; any other holds one).
SLOTS = 16


def body_key(seq: int, index: int = 0) -> int:
    return seq * SLOTS + index


def key_seq(key: int) -> int:
    """The stream sequence holding the body of `key`."""
    return key // SLOTS


def key_seqs(keys: Iterable[int]) -> set[int]:
    """The stream sequences holding these bodies (`key_seq` of each, at C's pace: a
    step asks it of its whole ledger)."""
    return set(map(SLOTS.__rfloordiv__, keys))


def encode_entry(messages: Sequence[tuple[StoredMessage, float]]) -> bytes:
    """A backlog entry: the messages of one send, each with what the ledger would hold
    of a message never received (its id, send time, group, deduplication id and when
    it becomes visible)."""
    return orjson.dumps(
        {
            "messages": [
                {
                    "id": stored.id,
                    "sent_at": stored.sent_at,
                    "visible_at": visible_at,
                    "group": stored.group_id,
                    "dedup": stored.deduplication_id,
                    **_body_fields(stored),
                }
                for stored, visible_at in messages
            ]
        }
    )


def decode_entry(data: bytes) -> list[tuple[StoredMessage, Body, float]]:
    """A backlog entry's messages as a ledger holds them (no body), their bodies, and
    their visibility times."""
    found = []
    for raw in orjson.loads(data)["messages"]:
        stored = StoredMessage(
            id=raw["id"],
            body="",
            attributes=NO_ATTRIBUTES,
            trace_header=None,
            sent_at=raw["sent_at"],
            group_id=raw["group"],
            deduplication_id=raw["dedup"],
        )
        found.append((stored, _body_from(raw), raw["visible_at"]))
    return found


def with_body(stored: StoredMessage, body: Body) -> StoredMessage:
    """`stored` with this body, attributes and trace header: `dataclasses.replace`'s
    result at a quarter of its cost (every drained message goes through here).
    tests/jetstream/test_codec.py checks that every other field is kept."""
    text, attributes, trace = body
    s = stored
    return StoredMessage(
        s.id,
        text,
        attributes,
        trace,
        s.sent_at,
        s.group_id,
        s.deduplication_id,
        s.sequence_number,
        s.dead_letter_source,
        s.last_error,
    )


def delivered(delivery: Delivery, message: StoredMessage, revision: int) -> Delivery:
    """`delivery` as it leaves the store: this message (its body filled in), its token
    resolved by the revision of the write that made it (as `dataclasses.replace` would,
    at a fifth of its cost; checked as `with_body`)."""
    d = delivery
    return Delivery(
        message, token(d.token, revision), d.receive_count, d.first_received_at, d.visible_at
    )


def decode_bodies(data: bytes) -> list[Body]:
    """The bodies of a stream message, in order: a backlog entry's, or a lone body."""
    raw = orjson.loads(data)
    return [_body_from(one) for one in raw["messages"]] if "messages" in raw else [_body_from(raw)]


def decode_body(data: bytes) -> Body:
    return _body_from(orjson.loads(data))


def _body_from(raw: dict[str, Any]) -> Body:
    attributes = {
        name: MessageAttribute(
            data_type, text, None if binary is None else base64.b64decode(binary)
        )
        for name, (data_type, text, binary) in raw["attributes"].items()
    }
    return raw["body"], attributes or NO_ATTRIBUTES, raw["trace"]


# --- move tasks -------------------------------------------------------------------------


def encode_tasks(tasks: Mapping[str, MoveTask]) -> bytes:
    return orjson.dumps([_task_fields(t) for t in tasks.values()])


def _task_fields(task: MoveTask) -> dict[str, Any]:
    fields = {f.name: getattr(task, f.name) for f in dataclasses.fields(task)}
    fields["source"] = [task.source.account, task.source.name]
    destination = task.destination
    fields["destination"] = None if destination is None else [destination.account, destination.name]
    fields["status"] = task.status.value
    return fields


def decode_tasks(data: bytes | None) -> dict[str, MoveTask]:
    tasks = {}
    for raw in orjson.loads(data) if data else []:
        destination = raw.pop("destination")
        task = MoveTask(
            **{
                **raw,
                "source": QueueKey(*raw["source"]),
                "destination": None if destination is None else QueueKey(*destination),
                "status": MoveTaskStatus(raw["status"]),
            }
        )
        tasks[task.id] = task
    return tasks
