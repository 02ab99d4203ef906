"""Receipt handles: the opaque text a client gets with each delivery.

A handle is the URL-safe base64 (unpadded) of a versioned record naming the queue and
the delivery: `1`, account, queue name, message id and fencing token, joined by a
separator no queue name or id can contain. Carrying the queue lets us refuse a handle
presented to another queue (as AWS does); carrying the token is what makes a stale
worker's receipt detectable (ARCHITECTURE.md, "Receipts are checked").
"""

from __future__ import annotations

import base64
import binascii
import re

from hopper.core.errors import InvalidReceipt
from hopper.core.model import QueueKey, Receipt

_VERSION = "1"
# A unit separator: not allowed in queue names, account ids or message ids.
_SEPARATOR = "\x1f"
_ALPHABET = re.compile(r"[A-Za-z0-9_-]+")
# A fencing token is a 64-bit sequence value: at most 20 digits, so int() never meets a
# text of thousands of digits (it refuses those past 4,300 with ValueError).
_TOKEN = re.compile(r"[0-9]{1,20}")
# Message ids are hopper's own (uuids); anything else cannot name a message, and must
# not reach a store (PostgreSQL refuses NUL in text).
_MESSAGE_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")
_FROM_URL_SAFE = bytes.maketrans(b"-_", b"+/")


def encode_receipt(key: QueueKey, receipt: Receipt) -> str:
    record = _SEPARATOR.join(
        [_VERSION, key.account, key.name, receipt.message_id, str(receipt.token)]
    )
    return base64.urlsafe_b64encode(record.encode("utf-8")).decode("ascii").rstrip("=")


def decode_receipt(key: QueueKey, handle: str) -> Receipt:
    """The delivery `handle` names, on the queue `key`. Raises InvalidReceipt for text
    hopper did not issue, a version it does not know, or a handle of another queue.
    The presented text is kept in `Receipt.handle` so errors can quote it."""
    fields = _fields(handle)
    if fields is None or len(fields) != 5 or fields[0] != _VERSION:
        raise InvalidReceipt(handle)
    _, account, name, message_id, token = fields
    # (isdigit alone admits digits int() refuses, such as "²")
    if (
        account != key.account
        or name != key.name
        or not _MESSAGE_ID.fullmatch(message_id)
        or not _TOKEN.fullmatch(token)
    ):
        raise InvalidReceipt(handle)
    return Receipt(message_id=message_id, token=int(token), handle=handle)


def _fields(handle: str) -> list[str] | None:
    # a2b_base64 would skip characters outside the alphabet: refuse them first.
    if _ALPHABET.fullmatch(handle) is None:
        return None
    try:
        encoded = handle.encode("ascii").translate(_FROM_URL_SAFE) + b"=" * (-len(handle) % 4)
        return binascii.a2b_base64(encoded).decode("utf-8").split(_SEPARATOR)
    except (binascii.Error, ValueError):
        return None
