"""Queue records in the `<prefix>_queues` bucket: created if absent, changed by
compare-and-set on their revision, with the time each queue was last deleted."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

from hopper.core.errors import QueueNotFound, StoreUnavailable
from hopper.core.model import QueueKey, QueueRecord
from hopper.store.jetstream import codec, edge

# How long a process trusts a queue record it read (the PostgreSQL store reads a queue's
# record once a second too): a change made by another process shows within this.
RECORD_SECONDS = 1.0

# Compare-and-set rounds before an operation gives up as unavailable (a hot key under
# many processes loses some rounds; this many means something is wrong).
MAX_ROUNDS = 64


def _segment(text: str) -> str:
    """`text` as one key token: a bucket key allows [-/_=.a-zA-Z0-9] and a dot splits
    tokens, so anything else (a region-scoped account's qualifier, a name's `.fifo`) is
    written =XX, per UTF-8 byte."""
    return "".join(
        chr(byte)
        if chr(byte).isascii() and (chr(byte).isalnum() or chr(byte) in "-_")
        else f"={byte:02x}"
        for byte in text.encode()
    )


def _record_key(key: QueueKey) -> str:
    return f"q.{_segment(key.account)}.{_segment(key.name)}"


def slots_key(key: QueueKey) -> str:
    """The queue's dispatch slots (slots.py)."""
    return f"s.{_segment(key.account)}.{_segment(key.name)}"


def _deleted_key(key: QueueKey) -> str:
    return f"d.{_segment(key.account)}.{_segment(key.name)}"


class Records:
    def __init__(self, res: edge.Resources) -> None:
        self._kv = res.queues
        # incarnation -> queue, for every record this process has read
        self.incarnations: dict[str, QueueKey] = {}
        # queue -> (read at, monotonic; what find returned), for RECORD_SECONDS
        self._recent: dict[QueueKey, tuple[float, tuple[QueueRecord, str, int]]] = {}
        # (the bucket's last sequence, every record) as the last scan read them
        self._scanned: tuple[int, dict[QueueKey, tuple[QueueRecord, str]]] | None = None
        self._checked_at = 0.0  # (monotonic) when the last scan began

    async def create(self, record: QueueRecord) -> tuple[QueueRecord, bool]:
        """Create the record unless its queue exists: (record, created). A new queue
        gets a new incarnation, so nothing of a deleted namesake is ever seen again."""
        key = _record_key(record.key)
        for _ in range(MAX_ROUNDS):
            raw, revision = await edge.get(self._kv, key)
            if raw is not None:
                return codec.decode_record(raw)[0], False
            try:
                await edge.put(
                    self._kv, key, codec.encode_record(record, uuid.uuid4().hex), revision
                )
            except edge.Conflict:
                continue
            return record, True
        raise StoreUnavailable("JetStream: too much contention creating a queue")

    async def find(
        self, key: QueueKey, *, fresh: bool = False
    ) -> tuple[QueueRecord, str, int] | None:
        """(record, incarnation, revision), or None when the queue does not exist; read
        within the last RECORD_SECONDS unless `fresh` (what this process changed, it
        reads afresh at once)."""
        recent = self._recent.get(key)
        if not fresh and recent is not None and time.monotonic() - recent[0] < RECORD_SECONDS:
            return recent[1]
        raw, revision = await edge.get(self._kv, _record_key(key))
        if raw is None:
            self._recent.pop(key, None)
            return None
        record, incarnation = codec.decode_record(raw)
        self.incarnations[incarnation] = key
        self._recent[key] = (time.monotonic(), (record, incarnation, revision))
        return record, incarnation, revision

    def forget(self, key: QueueKey) -> None:
        """This process changed or deleted the queue: read it afresh next time."""
        self._recent.pop(key, None)
        self._scanned = None

    async def scan(self, account: str | None = None) -> list[QueueRecord]:
        """Every record, or those of `account`. Read again only when the bucket changed
        since the last read (one stream-info request says): the dispatchers look at
        every queue each second, and 10,000 records took a third of a core to read."""
        checked = time.monotonic()
        with edge.translated():
            info = await self._kv.js.stream_info(f"KV_{self._kv.name}")
        last = info.state.last_seq
        if self._scanned is None or self._scanned[0] != last:
            found = [codec.decode_record(value) for _, value in await edge.scan(self._kv, "q.>")]
            for record, incarnation in found:
                self.incarnations[incarnation] = record.key
            # A write while it read is after `last`: the next scan reads again.
            self._scanned = (last, {record.key: (record, i) for record, i in found})
        self._checked_at = checked
        records = [record for record, _ in self._scanned[1].values()]
        return [r for r in records if account is None or r.key.account == account]

    async def listed(self, key: QueueKey) -> tuple[QueueRecord, str] | None:
        """(record, incarnation) as the last scan read them, checked again when that
        is older than RECORD_SECONDS (usually one stream-info request): a look-up for
        many queues at a time costs no request per queue. None when there is no scan
        (this process changed a record since): never a full read for one queue."""
        if self._scanned is not None and time.monotonic() - self._checked_at >= RECORD_SECONDS:
            await self.scan()
        return None if self._scanned is None else self._scanned[1].get(key)

    async def change(
        self, key: QueueKey, change: Callable[[QueueRecord], QueueRecord]
    ) -> QueueRecord:
        """Apply `change` by compare-and-set. Raises QueueNotFound."""
        for _ in range(MAX_ROUNDS):
            found = await self.find(key, fresh=True)
            if found is None:
                raise QueueNotFound(key)
            record, incarnation, revision = found
            record = change(record)
            value = codec.encode_record(record, incarnation)
            try:
                await edge.put(self._kv, _record_key(key), value, revision)
            except edge.Conflict:
                continue
            finally:
                # After the write: a look-up meanwhile may have kept the old record.
                self.forget(key)
            return record
        raise StoreUnavailable("JetStream: too much contention changing a queue")

    async def delete(self, key: QueueKey, at: float) -> tuple[QueueRecord, str] | None:
        """Delete the record and note the time; (record, incarnation) it had, or None."""
        for _ in range(MAX_ROUNDS):
            found = await self.find(key, fresh=True)
            if found is None:
                return None
            record, incarnation, revision = found
            try:
                await edge.remove(self._kv, _record_key(key), revision)
            except edge.Conflict:
                continue
            finally:
                self.forget(key)
            with edge.translated():
                await self._kv.kv.put(_deleted_key(key), str(at).encode())
            return record, incarnation
        raise StoreUnavailable("JetStream: too much contention deleting a queue")

    async def deleted_at(self, key: QueueKey) -> float | None:
        raw, _ = await edge.get(self._kv, _deleted_key(key))
        return None if raw is None else float(raw)
