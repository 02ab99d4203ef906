"""Rows of the Postgres store, both ways: the core's values as the JSON and columns
the tables hold, and query rows back as the core's frozen values.

The queue config is one jsonb document (SQL reads only retention, fifo and the
dead-letter rule from it); message attributes are a jsonb array, since jsonb objects
do not keep key order; binary values are base64.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

import asyncpg

from hopper.core.dispatch_targets import DispatchTarget
from hopper.core.errors import QueueNotFound
from hopper.core.model import (
    DeadLetterRule,
    Delivery,
    MessageAttribute,
    MoveTask,
    MoveTaskStatus,
    NewMessage,
    PeekedMessage,
    QueueConfig,
    QueueKey,
    QueueRecord,
    StoredMessage,
)
from hopper.core.retries import RetryPolicy


def config_json(config: QueueConfig) -> dict[str, Any]:
    data: dict[str, Any] = {
        "visibility_timeout": config.visibility_timeout,
        "maximum_message_size": config.maximum_message_size,
        "message_retention_period": config.message_retention_period,
        "delay_seconds": config.delay_seconds,
        "receive_message_wait_time_seconds": config.receive_message_wait_time_seconds,
        "fifo": config.fifo,
        "content_based_deduplication": config.content_based_deduplication,
        "extra": dict(config.extra),
        "maximum_depth": config.maximum_depth,
        "group_deduplication": config.group_deduplication,
    }
    policy = config.retry_policy
    if policy is not None:
        # The claims read these three (queries.sql, `backoff`).
        data["retry_policy"] = {
            "base": policy.base, "maximum": policy.maximum, "jitter": policy.jitter
        }
    if config.dispatch is not None:
        data["dispatch"] = dataclasses.asdict(config.dispatch)
    rule = config.dead_letter
    if rule is not None:
        data["dead_letter"] = {
            "account": rule.target.account,
            "name": rule.target.name,
            "max_receive_count": rule.max_receive_count,
        }
    return data


def config_from(data: Mapping[str, Any]) -> QueueConfig:
    rule = data.get("dead_letter")
    policy = data.get("retry_policy")
    return QueueConfig(
        visibility_timeout=data["visibility_timeout"],
        maximum_message_size=data["maximum_message_size"],
        message_retention_period=data["message_retention_period"],
        delay_seconds=data["delay_seconds"],
        receive_message_wait_time_seconds=data["receive_message_wait_time_seconds"],
        dead_letter=None
        if rule is None
        else DeadLetterRule(QueueKey(rule["account"], rule["name"]), rule["max_receive_count"]),
        fifo=data["fifo"],
        content_based_deduplication=data["content_based_deduplication"],
        extra=data["extra"],
        # Configs stored before the depth ceiling existed have no key: unbounded.
        maximum_depth=data.get("maximum_depth"),
        # Configs stored before DeduplicationScope was honoured: queue-wide, as before.
        group_deduplication=data.get("group_deduplication", False),
        retry_policy=None
        if policy is None
        else RetryPolicy(policy["base"], policy["maximum"], policy["jitter"]),
        dispatch=None if data.get("dispatch") is None else DispatchTarget(**data["dispatch"]),
    )


def record(row: asyncpg.Record) -> QueueRecord:
    return QueueRecord(
        key=QueueKey(row["account"], row["name"]),
        config=config_from(_jsonb(row["config"])),
        created_at=row["created_at"],
        last_modified_at=row["last_modified_at"],
        tags=_jsonb(row["tags"]),
    )


def _jsonb(value: Any) -> Any:
    # The store's pool decodes jsonb with a codec; a caller's connection (hopper.enqueue)
    # reads it as text, and a connection-wide codec is not ours to set on it.
    return json.loads(value) if isinstance(value, str) else value


def attributes_json(attributes: Mapping[str, MessageAttribute]) -> list[dict[str, str]]:
    """A jsonb array (jsonb objects do not keep key order); binary values in base64."""
    encoded = []
    for name, attribute in attributes.items():
        item = {"n": name, "t": attribute.data_type}
        if attribute.binary_value is not None:
            item["b"] = base64.b64encode(attribute.binary_value).decode("ascii")
        else:
            item["s"] = attribute.string_value or ""
        encoded.append(item)
    return encoded


def attributes_from(items: Sequence[Mapping[str, str]]) -> dict[str, MessageAttribute]:
    return {
        item["n"]: MessageAttribute(
            item["t"],
            string_value=item.get("s"),
            binary_value=base64.b64decode(item["b"]) if "b" in item else None,
        )
        for item in items
    }


def delivery(row: asyncpg.Record) -> Delivery:
    return Delivery(
        message=stored_message(row),
        token=row["token"],
        receive_count=row["receive_count"],
        first_received_at=row["first_received_at"],
        # The lease's end: the retry policy's backoff follows it (migration 0110).
        visible_at=row["visible_at"] - row["retry_delay"],
    )


def arrived_delivered(message: NewMessage, row: asyncpg.Record) -> Delivery:
    """The delivery of `message`, enqueued already delivered (`row`: its insert's)."""
    return Delivery(
        message=StoredMessage(
            id=message.id,
            body=message.body,
            attributes=message.attributes,
            trace_header=message.trace_header,
            sent_at=row["sent_at"],
        ),
        token=row["token"],
        receive_count=1,
        first_received_at=row["sent_at"],
        visible_at=row["visible_at"],
    )


def peeked(row: asyncpg.Record) -> PeekedMessage:
    return PeekedMessage(
        message=stored_message(row),
        receive_count=row["receive_count"],
        visible_at=row["visible_at"],
        first_received_at=row["first_received_at"],
        token=row["token"],
        retry_delay=row["retry_delay"],
    )


def stored_message(row: asyncpg.Record) -> StoredMessage:
    source = None
    if row["dead_letter_source_name"] is not None:
        source = QueueKey(row["dead_letter_source_account"], row["dead_letter_source_name"])
    return StoredMessage(
        id=row["id"],
        body=row["body"],
        attributes=attributes_from(row["attributes"]),
        trace_header=row["trace_header"],
        sent_at=row["sent_at"],
        group_id=row["group_id"],
        deduplication_id=row["dedup_id"],
        sequence_number=row["sequence_number"],
        dead_letter_source=source,
        last_error=row.get("last_error"),
    )


def move_task(row: asyncpg.Record) -> MoveTask:
    destination = None
    if row["destination_name"] is not None:
        destination = QueueKey(row["destination_account"], row["destination_name"])
    return MoveTask(
        id=row["id"],
        source=QueueKey(row["source_account"], row["source_name"]),
        destination=destination,
        max_per_second=row["max_per_second"],
        status=MoveTaskStatus(row["status"]),
        started_at=row["started_at"],
        to_move=row["to_move"],
        moved=row["moved"],
        failure_reason=row["failure_reason"],
        lease_until=row["lease_until"],
    )


def found(row: asyncpg.Record | None, key: QueueKey) -> asyncpg.Record:
    """The row of a statement on a queue; no row: the queue does not exist."""
    if row is None:
        raise QueueNotFound(key)
    return row


def found_id(row: asyncpg.Record | None, key: QueueKey) -> asyncpg.Record:
    """The row of a statement that reports its queue's id, NULL when there is none."""
    if row is None or row["queue_id"] is None:
        raise QueueNotFound(key)
    return row
