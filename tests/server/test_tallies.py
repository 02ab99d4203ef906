"""The request path's tallies (observability/tallies.py) publish what prometheus-client
would have counted itself. They use prometheus-client's internals (a histogram's
bounds, sum and buckets): a release that changes them fails here, not in a scrape."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry, Counter, Histogram

from hopper.observability.tallies import Tally, Timings

BUCKETS = (0.001, 0.01, 0.1, 1)
AMOUNTS = [0.0, 0.0005, 0.001, 0.0010001, 0.01, 0.05, 0.1, 0.5, 1, 1.5, 30]


@pytest.fixture(autouse=True)
def one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)


def samples(registry: CollectorRegistry) -> dict[tuple[str, frozenset], float]:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in registry.collect()
        for sample in family.samples
        if not sample.name.endswith("_created")
    }


def histogram() -> tuple[CollectorRegistry, Histogram]:
    registry = CollectorRegistry()
    return registry, Histogram("t", "t", ["action"], registry=registry, buckets=BUCKETS)


def test_published_timings_equal_what_the_histogram_observes_itself() -> None:
    # given the same observations, one histogram fed directly, one through Timings
    direct_registry, direct = histogram()
    tallied_registry, tallied = histogram()
    timings = Timings(tallied)
    for amount in AMOUNTS:
        direct.labels("Send").observe(amount)
        timings.observe(("Send",), amount)
    # when published, then they read the same, boundaries included
    assert samples(tallied_registry) == {}
    timings.publish()
    assert samples(tallied_registry) == samples(direct_registry)


def test_a_tally_counts_until_published_and_forgets_a_removed_series() -> None:
    registry = CollectorRegistry()
    counter = Counter("c", "c", ["queue"], registry=registry)
    tally = Tally(counter)
    tally.add(("a",), 2)
    tally.add(("a",))
    tally.add(("b",))
    assert tally.label_sets() == {("a",), ("b",)}
    tally.publish()
    tally.add(("a",))
    tally.remove(("b",))
    tally.publish()
    assert samples(registry) == {("c_total", frozenset({("queue", "a")})): 4.0}
    assert tally.label_sets() == {("a",)}
