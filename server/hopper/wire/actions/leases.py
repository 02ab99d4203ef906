"""Actions on a delivery, named by its receipt handle: DeleteMessage(+Batch) and
ChangeMessageVisibility(+Batch)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from hopper.core.bounds import Adjustments
from hopper.core.entries import per_entry
from hopper.core.errors import InvalidReceipt, QueueError
from hopper.core.model import QueueKey, Receipt, VisibilityChange
from hopper.core.service import QueueService
from hopper.wire import adjustments, validate
from hopper.wire.actions.batches import batch_result, failure
from hopper.wire.context import RequestContext
from hopper.wire.errors import SqsError, missing_parameter
from hopper.wire.queue_urls import addressed_queue
from hopper.wire.receipts import decode_receipt

T = TypeVar("T")


def _receipt(key: QueueKey, params: Mapping[str, Any]) -> Receipt:
    handle = validate.as_str(params, "ReceiptHandle")
    if not handle:
        raise missing_parameter("ReceiptHandle")
    return decode_receipt(key, handle)


def _change(key: QueueKey, params: Mapping[str, Any]) -> VisibilityChange:
    receipt = _receipt(key, params)
    timeout = validate.to_int("VisibilityTimeout", validate.required(params, "VisibilityTimeout"))
    return VisibilityChange(receipt, float(timeout))


async def _read(service: QueueService, key: QueueKey, read: Callable[[], T]) -> T:
    """`read()` the request's receipt. AWS resolves the queue before the handle, so a
    bad handle sent to a queue that does not exist is NonExistentQueue; the lookup is
    made only then, off the path of good handles."""
    try:
        return read()
    except InvalidReceipt:
        await service.get_queue(key)
        raise


async def delete_message(
    service: QueueService, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    key = addressed_queue(ctx, params)
    await service.delete(key, await _read(service, key, lambda: _receipt(key, params)))
    return {}


async def change_message_visibility(
    service: QueueService, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    key = addressed_queue(ctx, params)
    adjusted = Adjustments()
    change = await _read(service, key, lambda: _change(key, params))
    await service.change_visibility(key, change, adjusted)
    adjustments.tell(ctx, adjusted)
    return {}


async def delete_message_batch(
    service: QueueService, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    key = addressed_queue(ctx, params)
    entries = validate.batch_entries(params, "DeleteMessageBatchRequestEntry")
    decoded = [_each(lambda entry: _receipt(key, entry), entry) for entry in entries]
    errors = await per_entry(
        decoded, Receipt, lambda valid: service.delete_batch(key, valid),
        lambda: service.get_queue(key),
    )
    return _answer(entries, errors)


async def change_message_visibility_batch(
    service: QueueService, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    key = addressed_queue(ctx, params)
    entries = validate.batch_entries(params, "ChangeMessageVisibilityBatchRequestEntry")
    decoded = [_each(lambda entry: _change(key, entry), entry) for entry in entries]
    adjusted = Adjustments()
    errors = await per_entry(
        decoded, VisibilityChange,
        lambda valid: service.change_visibility_batch(key, valid, adjusted),
        lambda: service.get_queue(key),
    )
    adjustments.tell(ctx, adjusted)
    return _answer(entries, errors)


def _each(read: Callable[[dict[str, Any]], Any], entry: dict[str, Any]) -> Any:
    """One entry's decoded value, or the error that entry fails with alone (a garbage
    receipt handle fails its entry, not the batch)."""
    try:
        return read(entry)
    except (SqsError, QueueError) as error:
        return error


def _answer(
    entries: Sequence[dict[str, Any]], errors: Sequence[QueueError | SqsError | None]
) -> dict[str, Any]:
    successful: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    for entry, error in zip(entries, errors, strict=True):
        if error is None:
            successful.append({"Id": entry["Id"]})
        else:
            failed.append(failure(entry["Id"], error))
    return batch_result(successful, failed)
