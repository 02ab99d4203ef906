"""RecentQueues: the message paths' one-second memory of queue records."""

from __future__ import annotations

from hopper.core.model import QueueConfig, QueueKey, QueueRecord
from hopper.core.recent import RecentQueues

KEY = QueueKey("000000000000", "q")


class Ticks:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def queue_record(visibility: int = 30) -> QueueRecord:
    return QueueRecord(KEY, QueueConfig(visibility_timeout=visibility), 0.0, 0.0)


def test_a_record_is_served_for_ttl_seconds_then_read_again() -> None:
    ticks = Ticks()
    recent = RecentQueues(ttl=1.0, now=ticks)
    recent.put(queue_record())
    ticks.now += 1.0
    assert recent.get(KEY) == queue_record()
    ticks.now += 0.01
    assert recent.get(KEY) is None


def test_forget_drops_a_record_at_once() -> None:
    recent = RecentQueues()
    recent.put(queue_record())
    recent.forget(KEY)
    assert recent.get(KEY) is None


def test_the_cache_is_bounded() -> None:
    recent = RecentQueues(limit=3)
    for n in range(10):
        recent.put(QueueRecord(QueueKey("000000000000", f"q{n}"), QueueConfig(), 0.0, 0.0))
    kept = [n for n in range(10) if recent.get(QueueKey("000000000000", f"q{n}")) is not None]
    assert len(kept) <= 3
