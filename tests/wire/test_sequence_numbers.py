"""FIFO sequence numbers on the wire: 20-digit decimals in the store's order (AWS's
recorded shape, SQS-NOTES 5.11)."""

from __future__ import annotations

from hopper.wire.sequence_numbers import sequence_number_text

BIGINT_MAX = 2**63 - 1


def test_every_store_number_is_spelled_as_20_digits() -> None:
    for number in (1, 2, 999, 10**12, BIGINT_MAX):
        text = sequence_number_text(number)
        assert len(text) == 20 and text.isdigit() and text[0] != "0"


def test_the_spelling_keeps_the_order_as_numbers_and_as_strings() -> None:
    numbers = [1, 2, 10, 11, 5_000, 10**15, BIGINT_MAX]
    texts = [sequence_number_text(n) for n in numbers]
    assert texts == sorted(texts)
    assert [int(t) for t in texts] == sorted({int(t) for t in texts})
