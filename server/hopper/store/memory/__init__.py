"""The in-memory store: the reference model of the QueueStore contract, in one process."""

from hopper.store.memory.store import MemoryQueueStore

__all__ = ["MemoryQueueStore"]
