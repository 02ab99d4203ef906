"""NextDeadlines: what long polls of one process share about a queue's next deadline."""

from __future__ import annotations

from hopper.core.deadlines import NextDeadlines
from hopper.core.model import QueueKey

KEY = QueueKey("000000000000", "q")


class Ticks:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_an_answer_is_shared_for_ttl_seconds_then_asked_again() -> None:
    ticks = Ticks()
    deadlines = NextDeadlines(ttl=0.25, now=ticks)
    assert deadlines.get(KEY, clock_time=100.0) == (False, None)
    deadlines.put(KEY, None)
    assert deadlines.get(KEY, clock_time=100.0) == (True, None)
    ticks.now += 0.26
    assert deadlines.get(KEY, clock_time=100.0) == (False, None)


def test_a_deadline_that_has_come_is_asked_again() -> None:
    deadlines = NextDeadlines()
    deadlines.put(KEY, 130.0)
    assert deadlines.get(KEY, clock_time=129.0) == (True, 130.0)
    assert deadlines.get(KEY, clock_time=130.0) == (False, None)


def test_deadlines_set_here_are_folded_in_and_a_change_forgets() -> None:
    deadlines = NextDeadlines()
    deadlines.lower(KEY, 50.0)  # nothing known: nothing to lower
    assert deadlines.get(KEY, clock_time=0.0) == (False, None)
    deadlines.put(KEY, None)
    deadlines.lower(KEY, 140.0)
    deadlines.lower(KEY, 150.0)
    assert deadlines.get(KEY, clock_time=0.0) == (True, 140.0)
    deadlines.forget(KEY)
    assert deadlines.get(KEY, clock_time=0.0) == (False, None)
