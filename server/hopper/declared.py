"""Queues as configuration: a TOML file (`hopper serve --config FILE`) declares the
server's settings and its queues, and start-up creates or updates the queues to match.

    [settings]                      # any Settings field; flags and HOPPER_* win
    declared_queues_only = true

    [[queues]]
    name = "jobs"
    attributes = { VisibilityTimeout = 60, ReceiveMessageWaitTimeSeconds = 20 }
    dead_letter = { queue = "jobs-dead", max_receive_count = 5 }
    tags = { team = "billing" }

    [[queues]]
    name = "jobs-dead"              # a dead-letter queue may come after its sources

Attribute values are SQS's attribute names and values (numbers and booleans may be
written bare; a policy may be a table, sent as its JSON), validated exactly as
CreateQueue validates them. `dead_letter` is a shorthand for RedrivePolicy naming a
queue of the same account. `account_id` (default: the server's) places a queue in a
tenant's account.

Applying is idempotent: a missing queue is created; an existing one gets the declared
attributes and tags that differ (tags not declared are removed when `tags` is given;
attributes not declared are left as they are). Every queue is created before any
RedrivePolicy is set, so the order in the file does not matter. Each queue's outcome
is one log line: created, updated (what changed), or unchanged.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hopper.core.errors import QueueError, QueueNotFound
from hopper.core.model import QueueConfig, QueueKey, QueueRecord
from hopper.core.service import QueueService
from hopper.settings import Settings, SettingsError, read
from hopper.wire import attribute_names, queue_attributes
from hopper.wire.context import RequestContext
from hopper.wire.errors import SqsError, from_core

log = logging.getLogger("hopper.declared")

_QUEUE_KEYS = {"name", "account_id", "attributes", "dead_letter", "tags"}


@dataclass(frozen=True)
class DeclaredQueue:
    key: QueueKey
    settings: Mapping[str, Any]  # as CreateQueue's, without the dead-letter rule
    dead_letter: Any = None  # a DeadLetterRule, or None
    tags: Mapping[str, str] | None = None  # None: tags are not managed
    attribute_names: tuple[str, ...] = field(default=())


def declared_queues(path: str | Path, settings: Settings) -> list[DeclaredQueue]:
    """The `[[queues]]` of the config file, validated as CreateQueue would validate
    them. Raises SettingsError naming the queue and the reason."""
    entries = read(path).get("queues", [])
    if not isinstance(entries, list):
        raise SettingsError(f"{path}: queues must be an array of tables ([[queues]])")
    declared = [_queue(path, settings, entry) for entry in entries]
    seen: set[QueueKey] = set()
    for queue in declared:
        if queue.key in seen:
            raise SettingsError(f"{path}: queue {queue.key.name} is declared twice")
        seen.add(queue.key)
    return declared


def _queue(path: str | Path, settings: Settings, entry: Any) -> DeclaredQueue:
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        raise SettingsError(f"{path}: every [[queues]] entry needs a name")
    where = f"{path}: queue {entry['name']}"
    unknown = set(entry) - _QUEUE_KEYS
    if unknown:
        raise SettingsError(f"{where}: unknown keys {', '.join(sorted(unknown))}")
    key = QueueKey(str(entry.get("account_id", settings.account_id)), entry["name"])
    texts = {name: _text(value) for name, value in _table(where, entry, "attributes").items()}
    rule = entry.get("dead_letter")
    if rule is not None:
        texts["RedrivePolicy"] = _redrive_text(where, settings, key, rule)
    tags = entry.get("tags")
    if tags is not None:
        tags = {str(name): _text(value) for name, value in _table(where, entry, "tags").items()}
    try:
        parsed = queue_attributes.settings_from(texts, settings.region)
    except SqsError as error:
        raise SettingsError(f"{where}: {error.message}") from None
    dead_letter = parsed.pop("dead_letter", None)
    return DeclaredQueue(key, parsed, dead_letter, tags, tuple(texts))


def _table(where: str, entry: Mapping[str, Any], name: str) -> dict[str, Any]:
    value = entry.get(name, {})
    if not isinstance(value, dict):
        raise SettingsError(f"{where}: {name} must be a table")
    return value


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value)
    return str(value)


def _redrive_text(where: str, settings: Settings, key: QueueKey, rule: Any) -> str:
    if not isinstance(rule, dict) or set(rule) != {"queue", "max_receive_count"}:
        raise SettingsError(f"{where}: dead_letter needs exactly queue and max_receive_count")
    arn = f"arn:aws:sqs:{settings.region}:{key.account}:{rule['queue']}"
    return json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": rule["max_receive_count"]})


# --- applying --------------------------------------------------------------------------


async def apply(service: QueueService, queues: list[DeclaredQueue]) -> dict[str, str]:
    """Create or update every declared queue; returns queue name -> what happened (also
    logged). Raises SettingsError when the store refuses a declaration."""
    outcomes: dict[str, list[str] | None] = {}
    for queue in queues:
        outcomes[queue.key.name] = await _guarded(queue, _apply_queue(service, queue))
    for queue in queues:
        if queue.dead_letter is not None:
            changed = await _guarded(queue, _apply_dead_letter(service, queue))
            current = outcomes[queue.key.name]
            if current is not None:  # a queue created just now stays "created"
                current.extend(changed)
    report = {name: _describe(changed) for name, changed in outcomes.items()}
    for name, text in report.items():
        log.info("hopper: declared queue %s: %s", name, text)
    return report


async def _guarded(queue: DeclaredQueue, work: Any) -> Any:
    try:
        return await work
    except QueueError as error:
        message = from_core(error).message
    except SqsError as error:
        message = error.message
    raise SettingsError(f"declared queue {queue.key.name}: {message}")


async def _apply_queue(service: QueueService, queue: DeclaredQueue) -> list[str] | None:
    """None when the queue was created; else the names of what was updated."""
    existing = await _found(service, queue.key)
    if existing is None:
        await service.create_queue(queue.key, queue.settings, queue.tags or {})
        return None
    changed = _changes(existing.config, queue.settings)
    if changed:
        await service.set_queue_attributes(queue.key, changed)
    names = [_label(name, value) for name, value in changed.items()]
    if queue.tags is not None and dict(existing.tags) != dict(queue.tags):
        removed = [tag for tag in existing.tags if tag not in queue.tags]
        if removed:
            await service.untag_queue(queue.key, removed)
        await service.tag_queue(queue.key, queue.tags)
        names.append("tags")
    return names


async def _apply_dead_letter(service: QueueService, queue: DeclaredQueue) -> list[str]:
    record = await service.get_queue(queue.key)
    if record.config.dead_letter == queue.dead_letter:
        return []
    await service.set_queue_attributes(queue.key, {"dead_letter": queue.dead_letter})
    return ["RedrivePolicy"]


def _changes(config: QueueConfig, settings: Mapping[str, Any]) -> dict[str, Any]:
    """The declared settings that differ from the queue's (extras key by key)."""
    changed: dict[str, Any] = {}
    for name, value in settings.items():
        if name == "extra":
            extra = {k: v for k, v in value.items() if config.extra.get(k) != v}
            if extra:
                changed["extra"] = extra
        elif getattr(config, name, None) != value:
            changed[name] = value
    return changed


def _label(name: str, value: Any) -> str:
    if name == "extra":
        return ", ".join(sorted(value))
    return attribute_names.sqs_attribute_name(name)


def _describe(changed: list[str] | None) -> str:
    if changed is None:
        return "created"
    if not changed:
        return "unchanged"
    return "updated (" + ", ".join(changed) + ")"


# --- refusing queue management over the API ----------------------------------------------


Handler = Callable[[QueueService, RequestContext, dict[str, Any]], Awaitable[dict[str, Any]]]


def guarded(actions: Mapping[str, Handler]) -> dict[str, Handler]:
    """`actions` with queue management refused (`declared_queues_only`): DeleteQueue
    always, CreateQueue unless the queue exists (then it answers as AWS's idempotent
    CreateQueue does: the URL, or QueueNameExists; either way nothing changes), so
    applications that "create" their queue at start-up keep working."""
    create = actions["CreateQueue"]

    async def create_queue(
        service: QueueService, ctx: RequestContext, params: dict[str, Any]
    ) -> dict[str, Any]:
        name = params.get("QueueName")
        if isinstance(name, str) and await _found(service, QueueKey(ctx.owner, name)):
            return await create(service, ctx, params)
        raise access_denied(ctx, "CreateQueue")

    async def delete_queue(
        service: QueueService, ctx: RequestContext, params: dict[str, Any]
    ) -> dict[str, Any]:
        raise access_denied(ctx, "DeleteQueue")

    return {**actions, "CreateQueue": create_queue, "DeleteQueue": delete_queue}


def access_denied(ctx: RequestContext, action: str) -> SqsError:
    return SqsError(
        "AccessDenied",
        f"Access to the resource {ctx.base_url}/ is denied. {action} is refused: the "
        "queues of this server are declared in its configuration.",
    )


async def _found(service: QueueService, key: QueueKey) -> QueueRecord | None:
    """The queue's record, or None when it does not exist."""
    try:
        return await service.get_queue(key)
    except QueueNotFound:
        return None
