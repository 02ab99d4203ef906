"""What a dispatcher POSTs, and what it reads back.

`lambda`: the SQS event a Lambda function gets from an event source mapping, POSTed as
the request body, so the invocation URL of a Lambda runtime interface emulator (or
`sam local start-lambda`) works as the target unchanged. `raw`: one message per call,
its body as sent, its facts as `x-hopper-*` headers. A Lambda-style answer
`{"batchItemFailures": [{"itemIdentifier": <messageId>}]}` fails only those messages.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any

from hopper.core.model import Delivery, MessageAttribute, QueueKey
from hopper.wire import digests
from hopper.wire.context import RequestContext
from hopper.wire.message_attributes import system_attributes
from hopper.wire.queue_urls import queue_arn
from hopper.wire.receipts import encode_receipt

# A header name carries these characters only; other attributes are not sent as headers.
_HEADER_NAME = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")


def lambda_event(ctx: RequestContext, key: QueueKey, batch: Sequence[Delivery]) -> bytes:
    """The SQS event of `batch`, as Lambda's event source mapping builds it."""
    arn = queue_arn(ctx, key)
    records = [_record(ctx, key, arn, delivery) for delivery in batch]
    return json.dumps({"Records": records}, separators=(",", ":")).encode()


def _record(ctx: RequestContext, key: QueueKey, arn: str, delivery: Delivery) -> dict[str, Any]:
    message = delivery.message
    record: dict[str, Any] = {
        "messageId": message.id,
        "receiptHandle": encode_receipt(key, delivery.receipt),
        "body": message.body,
        "attributes": system_attributes(ctx, delivery, ["All"]),
        "messageAttributes": {
            name: _lambda_attribute(attribute) for name, attribute in message.attributes.items()
        },
        "md5OfBody": digests.md5_of_body(message.body),
        "eventSource": "aws:sqs",
        "eventSourceARN": arn,
        "awsRegion": ctx.home,
    }
    attributes_md5 = digests.md5_of_attributes(message.attributes)
    if attributes_md5 is not None:
        record["md5OfMessageAttributes"] = attributes_md5
    return record


def _lambda_attribute(attribute: MessageAttribute) -> dict[str, Any]:
    # Lambda spells message attributes in camel case, with the (unused) list members.
    value: dict[str, Any] = {
        "stringListValues": [],
        "binaryListValues": [],
        "dataType": attribute.data_type,
    }
    if attribute.string_value is not None:
        value["stringValue"] = attribute.string_value
    if attribute.binary_value is not None:
        value["binaryValue"] = base64.b64encode(attribute.binary_value).decode()
    return value


def raw_headers(ctx: RequestContext, key: QueueKey, delivery: Delivery) -> dict[str, str]:
    """The facts of one message sent raw: ids, counts and times, and its user attributes
    whose names and values a header can carry (binary ones in base64)."""
    message = delivery.message
    headers = {
        "content-type": "text/plain; charset=utf-8",
        "x-hopper-message-id": message.id,
        "x-hopper-receipt-handle": encode_receipt(key, delivery.receipt),
        "x-hopper-queue-arn": queue_arn(ctx, key),
        "x-hopper-receive-count": str(delivery.receive_count),
        "x-hopper-sent-timestamp": str(int(message.sent_at * 1000)),
    }
    if message.group_id is not None:
        headers["x-hopper-message-group-id"] = message.group_id
    for name, attribute in message.attributes.items():
        text = attribute.string_value
        if attribute.binary_value is not None:
            text = base64.b64encode(attribute.binary_value).decode()
        if text is not None and set(name) <= _HEADER_NAME and text.isascii() and text.isprintable():
            headers[f"x-hopper-attribute-{name}"] = text
    return headers


def failed_items(answer: bytes, batch: Sequence[Delivery]) -> frozenset[str] | None:
    """The message ids a 2xx answer reports failed: none for an answer that is not a
    batchItemFailures document (the whole batch succeeded); None (the whole batch
    failed) when it names an item that is not in the batch, as Lambda treats it."""
    try:
        document = json.loads(answer) if answer.strip().startswith(b"{") else None
    except ValueError:
        return frozenset()
    if not isinstance(document, dict) or "batchItemFailures" not in document:
        return frozenset()
    items = document["batchItemFailures"]
    if items is None:
        return frozenset()
    ids = {delivery.message.id for delivery in batch}
    failed = set()
    for item in items if isinstance(items, list) else [None]:
        identifier = item.get("itemIdentifier") if isinstance(item, dict) else None
        if identifier not in ids:
            return None
        failed.add(identifier)
    return frozenset(failed)
