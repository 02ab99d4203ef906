"""What the queue core tells an observer (metrics) about the messages it moves.

The core calls these after each store call succeeded; an observer must be cheap and
must not raise. `NoEvents` is the default: a core without metrics pays nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from hopper.core.model import Delivery, QueueKey


class Events(Protocol):
    def sent(self, key: QueueKey, count: int) -> None:
        """`count` new messages entered the queue (duplicates and refusals excluded)."""
        ...

    def received(self, key: QueueKey, deliveries: Sequence[Delivery]) -> None:
        """A receive handed out `deliveries` (a receive count above 1 is a redelivery)."""
        ...

    def deleted(self, key: QueueKey, count: int) -> None:
        """`count` DeleteMessage receipts succeeded."""
        ...

    def queue_deleted(self, key: QueueKey) -> None:
        """The queue is gone: forget everything kept for it (a suite that makes a queue
        per test deletes thousands)."""
        ...


class NoEvents:
    def sent(self, key: QueueKey, count: int) -> None:
        pass

    def received(self, key: QueueKey, deliveries: Sequence[Delivery]) -> None:
        pass

    def deleted(self, key: QueueKey, count: int) -> None:
        pass

    def queue_deleted(self, key: QueueKey) -> None:
        pass


class Broadcast:
    """Every event to each of several observers (the metrics and the console's
    history), in order."""

    def __init__(self, *observers: Events) -> None:
        self._observers = list(observers)

    def add(self, observer: Events) -> None:
        """One more observer (one made after the service it observes)."""
        self._observers.append(observer)

    def sent(self, key: QueueKey, count: int) -> None:
        for observer in self._observers:
            observer.sent(key, count)

    def received(self, key: QueueKey, deliveries: Sequence[Delivery]) -> None:
        for observer in self._observers:
            observer.received(key, deliveries)

    def deleted(self, key: QueueKey, count: int) -> None:
        for observer in self._observers:
            observer.deleted(key, count)

    def queue_deleted(self, key: QueueKey) -> None:
        for observer in self._observers:
            observer.queue_deleted(key)
