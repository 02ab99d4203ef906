"""Receipt handles: the opaque text a client gets with each delivery.

A handle is the URL-safe base64 (unpadded) of a versioned record naming the queue and
the delivery: `1`, account, queue name, message id and fencing token, joined by a
separator no queue name or id can contain. Carrying the queue lets us refuse a handle
presented to another queue (as AWS does); carrying the token is what makes a stale
worker's receipt detectable (DESIGN.md, "Receipts are checked").
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
    if QueueKey(account, name) != key or not message_id or not token.isdigit():
        raise InvalidReceipt(handle)
    return Receipt(message_id=message_id, token=int(token), handle=handle)


def _fields(handle: str) -> list[str] | None:
    # b64decode would skip characters outside the alphabet: refuse them first.
    if _ALPHABET.fullmatch(handle) is None:
        return None
    try:
        raw = base64.urlsafe_b64decode(handle + "=" * (-len(handle) % 4))
        return raw.decode("utf-8").split(_SEPARATOR)
    except (binascii.Error, ValueError):
        return None
