"""How a FIFO message's sequence number is spelled on the wire.

AWS's are "large, non-consecutive" decimal strings (128-bit in the documentation, 20
digits in every recorded response), strictly increasing within a message group. The
stores number FIFO messages with a counter (a bigint on Postgres); an offset of 10**19
spells every counter value as 20 digits without a leading zero and keeps the order, so
clients that store, sort or parse AWS's sequence numbers see the same shape.
"""

from __future__ import annotations

# 10**19 + a bigint (< 9.3 * 10**18) stays below 10**20: always 20 digits.
_OFFSET = 10**19


def sequence_number_text(number: int) -> str:
    """The SequenceNumber of a FIFO message the store numbered `number`."""
    return str(_OFFSET + number)
