"""Receipt handles: opaque, URL-safe, and bound to the queue they were issued for."""

from __future__ import annotations

import base64
import re

import pytest

from hopper.core.errors import InvalidReceipt
from hopper.core.model import QueueKey, Receipt
from hopper.wire.receipts import decode_receipt, encode_receipt

QUEUE = QueueKey("000000000000", "jobs")


def test_a_handle_decodes_to_the_delivery_it_was_issued_for():
    handle = encode_receipt(QUEUE, Receipt("m-1", 42))
    receipt = decode_receipt(QUEUE, handle)
    assert (receipt.message_id, receipt.token) == ("m-1", 42)


def test_a_decoded_receipt_keeps_the_presented_text():
    handle = encode_receipt(QUEUE, Receipt("m-1", 7))
    assert decode_receipt(QUEUE, handle).handle == handle


def test_a_handle_is_url_safe_text():
    handle = encode_receipt(QueueKey("123456789012", "q.fifo"), Receipt("m" * 36, 10**15))
    assert re.fullmatch(r"[A-Za-z0-9_-]+", handle)


def test_two_deliveries_of_one_message_have_different_handles():
    assert encode_receipt(QUEUE, Receipt("m-1", 1)) != encode_receipt(QUEUE, Receipt("m-1", 2))


@pytest.mark.parametrize("garbage", ["garbage", "", "!!!", "a b", "MQ", "bm90LWEtcmVjZWlwdA"])
def test_text_hopper_did_not_issue_is_an_invalid_receipt(garbage):
    with pytest.raises(InvalidReceipt) as raised:
        decode_receipt(QUEUE, garbage)
    assert raised.value.receipt_handle == garbage


def test_a_handle_of_another_queue_is_an_invalid_receipt():
    handle = encode_receipt(QueueKey("000000000000", "other"), Receipt("m-1", 1))
    with pytest.raises(InvalidReceipt):
        decode_receipt(QUEUE, handle)


def test_a_handle_of_another_account_is_an_invalid_receipt():
    handle = encode_receipt(QueueKey("111111111111", "jobs"), Receipt("m-1", 1))
    with pytest.raises(InvalidReceipt):
        decode_receipt(QUEUE, handle)


def _forged(*fields: str) -> str:
    record = "\x1f".join(fields).encode("utf-8")
    return base64.urlsafe_b64encode(record).decode("ascii").rstrip("=")


@pytest.mark.parametrize(
    "token", ["\u00b2", "\u0663", "1\u00b2", "-1", "+1", " 1", "", "1.0"], ids=repr
)
def test_a_handle_whose_token_is_not_plain_digits_is_an_invalid_receipt(token):
    handle = _forged("1", QUEUE.account, QUEUE.name, "m-1", token)
    with pytest.raises(InvalidReceipt):
        decode_receipt(QUEUE, handle)


def test_a_forged_handle_of_the_right_shape_decodes():
    assert decode_receipt(QUEUE, _forged("1", QUEUE.account, QUEUE.name, "m-1", "9")).token == 9
