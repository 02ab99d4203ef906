"""A queue's ledger: its messages with their delivery state (leases, tokens, receive
counts), its deduplication windows and live keys, its FIFO receive attempts and group
index, and the rules these carry (retention, visibility, room under a depth ceiling,
the order of a FIFO queue's deliverable runs).

The memory store keeps one ledger per queue; the JetStream store decodes a queue's
ledger from its key-value entry. Both run the same rules on their ledgers
(`rules.LedgerStore`), and neither reaches into the other.
"""

from hopper.store.ledger.groups import Group, fifo_runs, in_send_order
from hopper.store.ledger.messages import NO_ATTRIBUTES, Attempt, Message, delivery
from hopper.store.ledger.queues import Queue

__all__ = [
    "NO_ATTRIBUTES",
    "Attempt",
    "Group",
    "Message",
    "Queue",
    "delivery",
    "fifo_runs",
    "in_send_order",
]
