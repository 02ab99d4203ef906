"""Message actions: SendMessage, SendMessageBatch, ReceiveMessage."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hopper.core.bounds import Adjustments
from hopper.core.entries import per_entry
from hopper.core.errors import QueueError
from hopper.core.model import Delivery, MessageDraft, QueueKey, SendResult
from hopper.core.service import QueueService
from hopper.wire import adjustments, digests, duplicates, message_attributes, validate
from hopper.wire.actions.batches import batch_result, failure
from hopper.wire.context import RequestContext
from hopper.wire.errors import SqsError, missing_parameter
from hopper.wire.queue_urls import addressed_queue
from hopper.wire.receipts import encode_receipt
from hopper.wire.sequence_numbers import sequence_number_text


def message_draft(ctx: RequestContext, params: Mapping[str, Any]) -> MessageDraft:
    """A SendMessage (or batch entry) as the core takes it. An empty body is
    MissingParameter, as on AWS."""
    body = validate.as_str(params, "MessageBody")
    if not body:
        raise missing_parameter("MessageBody")
    delay = validate.as_int(params, "DelaySeconds")
    return MessageDraft(
        body=body,
        attributes=validate.message_attributes(params.get("MessageAttributes")),
        trace_header=validate.trace_header(params.get("MessageSystemAttributes"), ctx),
        delay=None if delay is None else float(delay),
        group_id=validate.as_str(params, "MessageGroupId"),
        deduplication_id=validate.as_str(params, "MessageDeduplicationId"),
    )


def sent(params: Mapping[str, Any], draft: MessageDraft, result: SendResult) -> dict[str, Any]:
    """What SQS answers for one send: the id and the digests of what it stored.
    MD5OfMessageSystemAttributes answers a MessageSystemAttributes parameter only
    (a trace id taken from the request header is not the client's to check)."""
    out: dict[str, Any] = {
        "MessageId": result.message_id,
        "MD5OfMessageBody": digests.md5_of_body(draft.body),
    }
    attributes_md5 = digests.md5_of_attributes(draft.attributes)
    if attributes_md5 is not None:
        out["MD5OfMessageAttributes"] = attributes_md5
    if params.get("MessageSystemAttributes"):
        system_md5 = digests.md5_of_system_attributes(draft.trace_header)
        if system_md5 is not None:
            out["MD5OfMessageSystemAttributes"] = system_md5
    if result.sequence_number is not None:
        out["SequenceNumber"] = sequence_number_text(result.sequence_number)
    return out


async def send_message(
    service: QueueService, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    key = addressed_queue(ctx, params)
    draft = message_draft(ctx, params)
    result = await service.send(key, draft)
    duplicates.tell(ctx, result)
    return sent(params, draft, result)


async def send_message_batch(
    service: QueueService, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    """Entries that fail wire decoding fail alone; the rest go to the core in one call,
    which enqueues its valid ones together."""
    key = addressed_queue(ctx, params)
    entries = validate.batch_entries(params, "SendMessageBatchRequestEntry")
    drafts: list[MessageDraft | SqsError] = []
    for entry in entries:
        try:
            drafts.append(message_draft(ctx, entry))
        except SqsError as error:
            drafts.append(error)
    outcomes: list[SendResult | QueueError | SqsError] = await per_entry(
        drafts, MessageDraft, lambda valid: service.send_batch(key, valid),
        lambda: service.get_queue(key),
    )
    successful: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    collapsed: list[str] = []
    for entry, draft, outcome in zip(entries, drafts, outcomes, strict=True):
        if isinstance(outcome, SendResult) and isinstance(draft, MessageDraft):
            successful.append({"Id": entry["Id"], **sent(entry, draft, outcome)})
            if outcome.duplicate:
                collapsed.append(entry["Id"])
        elif not isinstance(outcome, SendResult):
            failed.append(failure(entry["Id"], outcome))
    duplicates.tell_batch(ctx, collapsed)
    return batch_result(successful, failed)


async def receive_message(
    service: QueueService, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    key = addressed_queue(ctx, params)
    visibility = validate.as_int(params, "VisibilityTimeout")
    wait = validate.as_int(params, "WaitTimeSeconds")
    attempt_id = validate.as_str(params, "ReceiveRequestAttemptId")
    count = validate.as_int(params, "MaxNumberOfMessages")
    adjusted = Adjustments()
    deliveries = await service.receive(
        key,
        max_messages=1 if count is None else count,
        visibility_timeout=None if visibility is None else float(visibility),
        wait_time=None if wait is None else float(wait),
        adjustments=adjusted,
        attempt_id=attempt_id,
        gone=ctx.gone,
    )
    adjustments.tell(ctx, adjusted)
    if not deliveries:
        return {}  # AWS sends no Messages member when nothing was received
    system_names = validate.as_str_list(params, "AttributeNames") + validate.as_str_list(
        params, "MessageSystemAttributeNames"
    )
    user_names = validate.as_str_list(params, "MessageAttributeNames")
    return {
        "Messages": [
            _message(ctx, key, delivery, system_names, user_names) for delivery in deliveries
        ]
    }


def _message(
    ctx: RequestContext,
    key: QueueKey,
    delivery: Delivery,
    system_names: list[str],
    user_names: list[str],
) -> dict[str, Any]:
    message = delivery.message
    out: dict[str, Any] = {
        "MessageId": message.id,
        "ReceiptHandle": encode_receipt(key, delivery.receipt),
        "MD5OfBody": digests.md5_of_body(message.body),
        "Body": message.body,
    }
    system = message_attributes.system_attributes(ctx, delivery, system_names)
    if system:
        out["Attributes"] = system
    if not message.attributes:  # most messages: nothing to select
        return out
    # The digest covers the attributes returned, which is what SDKs recompute.
    selected = message_attributes.select_message_attributes(message.attributes, user_names)
    md5 = digests.md5_of_attributes(selected)
    if md5 is not None:
        out["MD5OfMessageAttributes"] = md5
        out["MessageAttributes"] = {
            name: message_attributes.attribute_value(value) for name, value in selected.items()
        }
    return out
