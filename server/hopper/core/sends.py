"""Sending: the store's send, with what qualifies handed straight to the long polls
waiting in this process (core/handoff.py) and the other waiters woken for the rest
(core/wakeups.py). A waiter that misses a wake-up still looks at its deadline
(core/long_poll.py), so a send never depends on one arriving."""

from __future__ import annotations

from collections.abc import Sequence

from hopper.core import handoff
from hopper.core.clock import Clock
from hopper.core.long_poll import LongPolls
from hopper.core.model import NewMessage, QueueKey, SendResult
from hopper.core.store import QueueStore
from hopper.core.wakeups import Wakeups, Watch, news


class Sends:
    def __init__(
        self, store: QueueStore, clock: Clock, wakeups: Wakeups, polls: LongPolls
    ) -> None:
        self.store = store
        self.clock = clock
        self.wakeups = wakeups
        self.polls = polls

    async def send(
        self, key: QueueKey, sent: Sequence[NewMessage], max_depth: int | None
    ) -> list[SendResult]:
        """store.send, with what qualifies handed to idle long polls of this process on
        the way (core/handoff.py), and the other waiters woken for the rest."""
        results = await self._send(key, sent, max_depth)
        self._wake_for(sent, results, key)
        return results

    async def _send(
        self, key: QueueKey, sent: Sequence[NewMessage], max_depth: int | None
    ) -> list[SendResult]:
        offers: list[tuple[Watch, int]] = []
        if self.wakeups.takers(key) and handoff.takes_leases(key, sent, max_depth):
            count = sum(handoff.qualifies(message) for message in sent)
            if count:
                room = await self.polls.in_flight_room(key)
                offers = self.wakeups.offer(key, min(count, room))
        if not offers:
            return await self.store.send(key, sent, now=self.clock.now(), max_depth=max_depth)
        leased, owners = handoff.lease_offered(sent, offers)
        try:
            results = await self.store.send(key, leased, now=self.clock.now(), max_depth=max_depth)
        except BaseException:
            for watch, _ in offers:
                watch.hand([])
            raise
        handed = [
            (owner, result.delivery)
            for owner, result in zip(owners, results, strict=True)
            if owner is not None and result.delivery is not None
        ]
        self.polls.delivered(key, [delivery for _, delivery in handed])
        for watch, _ in offers:
            mine = [delivery for owner, delivery in handed if owner is watch]
            if not watch.hand(mine):
                self.polls.release_later(key, mine)
        return results

    def _wake_for(
        self, sent: Sequence[NewMessage], results: Sequence[SendResult], key: QueueKey
    ) -> None:
        """Wake as many local waiters as the send made messages receivable right away;
        a delayed message's deadline is one the waiters should sleep until at most."""
        enqueued = news(sent, results)
        receivable = sum(message.delay <= 0 for message in enqueued)
        delays = [message.delay for message in enqueued if message.delay > 0]
        if delays:
            self.polls.expect(key, self.clock.time() + min(delays))
        if receivable:
            self.wakeups.notify(key, receivable)
