"""The in-memory store: the reference model of the QueueStore contract, in one process.

It is the ledger's rules (store/ledger/rules.py) over ledgers that live in this
process's memory; the JetStream store runs the same rules on ledgers it reads from
JetStream.
"""

from hopper.store.ledger.rules import LedgerStore


class MemoryQueueStore(LedgerStore):
    """Every queue's ledger in this process: one asyncio loop owns them, so each call is
    atomic without locks, and nothing survives the process."""


__all__ = ["MemoryQueueStore"]
