"""The console's JSON shapes: queues, messages and move tasks as the page reads them.
Texts stay texts: the page puts every value in place as text, never as markup."""

from __future__ import annotations

import base64
import dataclasses
from typing import Any

from hopper.core.model import MessageAttribute, MoveTask, PeekedMessage, QueueKey
from hopper.core.operators import state_of
from hopper.observability.overview import QueueView


def queue_json(view: QueueView) -> dict[str, Any]:
    rule = view.record.config.dead_letter
    policy = view.record.config.retry_policy
    target = view.record.config.dispatch
    return {
        "account": view.key.account,
        "name": view.key.name,
        "fifo": view.record.config.fifo,
        "visible": view.stats.visible,
        "in_flight": view.stats.in_flight,
        "delayed": view.stats.delayed,
        "depth": view.depth,
        "oldest_age": view.oldest_age,
        "oldest_visible_age": view.oldest_visible_age,
        "redelivered": view.stats.redelivered,
        "dead_letter_target": None if rule is None else rule.target.name,
        "max_receive_count": None if rule is None else rule.max_receive_count,
        "dead_letter_depth": view.dead_letter_depth,
        "dead_letter_sources": [source.name for source in view.sources],
        "retry_policy": None if policy is None else dataclasses.asdict(policy),
        "dispatch": None if target is None else dataclasses.asdict(target),
    }


def message_json(peeked: PeekedMessage, now: float) -> dict[str, Any]:
    message = peeked.message
    source = message.dead_letter_source
    return {
        "id": message.id,
        "state": state_of(peeked, now).value,
        "dead": source is not None,
        "body": message.body,
        "sent_at": message.sent_at,
        "age": max(0.0, now - message.sent_at),
        "receive_count": peeked.receive_count,
        "token": peeked.token,
        "first_received_at": peeked.first_received_at,
        "visible_at": peeked.visible_at,
        "group_id": message.group_id,
        "deduplication_id": message.deduplication_id,
        "sequence_number": message.sequence_number,
        "dead_letter_source": None if source is None else source.name,
        "last_error": message.last_error,
        "attributes": {
            name: attribute_json(value) for name, value in message.attributes.items()
        },
    }


def attribute_json(attribute: MessageAttribute) -> dict[str, str]:
    if attribute.binary_value is not None:
        value = base64.b64encode(attribute.binary_value).decode("ascii")
        return {"DataType": attribute.data_type, "BinaryValue": value}
    return {"DataType": attribute.data_type, "StringValue": attribute.string_value or ""}


def task_json(task: MoveTask) -> dict[str, Any]:
    return {
        "id": task.id,
        "status": task.status.value,
        "destination": _name(task.destination),
        "max_per_second": task.max_per_second,
        "started_at": task.started_at,
        "to_move": task.to_move,
        "moved": task.moved,
        "failure_reason": task.failure_reason,
    }


def _name(key: QueueKey | None) -> str | None:
    return None if key is None else key.name
