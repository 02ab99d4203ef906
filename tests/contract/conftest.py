"""Fixtures of the contract suite: a fake clock, and a fresh store of every kind."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from hopper.core.clock import FakeClock
from hopper.core.service import QueueService
from hopper.core.store import QueueStore

from .stores import STORES


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(params=STORES)
async def store(request: pytest.FixtureRequest, clock: FakeClock) -> AsyncIterator[QueueStore]:
    async with request.param(clock) as store:
        yield store


@pytest.fixture
async def service(store: QueueStore, clock: FakeClock) -> AsyncIterator[QueueService]:
    """The queue core over each store, with AWS's timing rules on and a long poll
    fallback long enough that tests see wake-ups, not polling."""
    service = QueueService(store, clock=clock, poll_fallback_seconds=30.0)
    yield service
