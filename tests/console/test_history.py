"""The console's history: intervals over the last hour, bounded in queues and length."""

from __future__ import annotations

from hopper.console import history
from hopper.console.history import History
from hopper.core.model import QueueKey

Q = QueueKey("000000000000", "q")


class Ticks:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def test_counts_land_in_the_interval_they_happened_in_and_depth_is_the_last_seen() -> None:
    clock = Ticks()
    history = History(interval=30, span=120, clock=clock)
    history.sent(Q, 3)
    history.depth(Q, 3)
    clock.now += 30
    history.deleted(Q, 2)
    history.depth(Q, 1)
    history.depth(Q, 2)
    points = history.points(Q)
    assert [p["sent"] for p in points] == [0, 0, 3, 0]
    assert [p["deleted"] for p in points] == [0, 0, 0, 2]
    assert [p["depth"] for p in points] == [None, None, 3, 2]


def test_an_hour_later_the_old_intervals_are_gone() -> None:
    clock = Ticks()
    history = History(interval=30, span=3600, clock=clock)
    history.sent(Q, 1)
    clock.now += 3600
    assert sum(p["sent"] for p in history.points(Q)) == 0
    assert len(history.points(Q)) == 120


def test_at_most_max_queues_are_tracked_and_deleted_ones_make_room() -> None:
    history = History(max_queues=2, clock=Ticks())
    keys = [QueueKey("000000000000", f"q{n}") for n in range(3)]
    for key in keys:
        history.sent(key, 1)
    assert history.tracked() == 2
    assert sum(p["sent"] for p in history.points(keys[2])) == 0
    history.keep_only({keys[1]})
    history.sent(keys[2], 1)
    assert history.tracked() == 2 and sum(p["sent"] for p in history.points(keys[2])) == 1


def test_samples_come_every_period_while_a_sample_costs_at_most_a_hundredth_of_it() -> None:
    assert history.next_sample_in(0.05, period=10.0) == 10.0
    assert history.next_sample_in(0.1, period=10.0) == 10.0


def test_a_dear_sample_stretches_the_gap_up_to_two_intervals() -> None:
    assert history.next_sample_in(0.4, period=10.0) == 40.0  # 10,000 queues listed
    assert history.next_sample_in(17.0, period=10.0) == 2 * history.INTERVAL_SECONDS
