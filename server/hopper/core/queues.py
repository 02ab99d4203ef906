"""Queue rules: names, settings into configs, CreateQueue's comparison, tags.

`settings` everywhere is what a client passed, keyed by `QueueConfig` field name; the
wire has already parsed and range-checked the values.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any

from hopper.core import characters, limits, permissions, redrive_allow
from hopper.core import fifo as fifo_rules
from hopper.core.errors import (
    InvalidAttributeName,
    InvalidAttributeValue,
    InvalidParameter,
    InvalidParameterRule,
    MissingParameter,
    QueueNameTaken,
)
from hopper.core.model import QueueConfig, QueueKey, QueueRecord
from hopper.core.store import QueueStore

_STANDARD_NAME = re.compile(r"[A-Za-z0-9_-]{1,80}")
# The .fifo suffix counts towards the 80 characters.
_FIFO_NAME = re.compile(r"[A-Za-z0-9_-]{1,75}\.fifo")
STANDARD_NAME_RULE = (
    "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length"
)
FIFO_NAME_RULE = (
    "The name of a FIFO queue can only include alphanumeric characters, hyphens, or "
    "underscores, must end with .fifo suffix and be 1 to 80 in length"
)
# group_deduplication follows from DeduplicationScope at creation: not set directly.
_FIELDS = frozenset(f.name for f in dataclasses.fields(QueueConfig)) - {"group_deduplication"}
# Attributes that exist only on FIFO queues: on a standard queue SQS does not know them.
_FIFO_ONLY = ("content_based_deduplication",)
_FIFO_ONLY_EXTRA = (fifo_rules.DEDUPLICATION_SCOPE, fifo_rules.FIFO_THROUGHPUT_LIMIT)
_KMS_KEY = "KmsMasterKeyId"
_KMS_REUSE_PERIOD = "KmsDataKeyReusePeriodSeconds"
_SQS_MANAGED_SSE = "SqsManagedSseEnabled"
MAX_TAG_KEY_LENGTH = 128
MAX_TAG_VALUE_LENGTH = 256
# The attributes the core keeps as text (Policy, KmsMasterKeyId, ...) are returned by
# every GetQueueAttributes All: none may grow past a policy's own quota.
MAX_EXTRA_BYTES = permissions.MAX_POLICY_BYTES
_TAG_CHARACTERS = (
    "Tag keys and values may only contain characters of the set " + characters.ALLOWED_SET + "."
)


def check_name(key: QueueKey, fifo: bool) -> None:
    """A FIFO queue's name ends in .fifo and a standard queue's name has no dot at all
    (so `x.fifo` without FifoQueue=true breaks the standard rule, as on AWS)."""
    if fifo and _FIFO_NAME.fullmatch(key.name) is None:
        raise InvalidParameterRule("QueueName", key.name, FIFO_NAME_RULE)
    if not fifo and _STANDARD_NAME.fullmatch(key.name) is None:
        raise InvalidParameterRule("QueueName", key.name, STANDARD_NAME_RULE)


def check_fields(settings: Mapping[str, Any], *, fifo: bool) -> None:
    """Every setting is one SQS knows, and a standard queue takes none of the FIFO-only
    ones (AWS's texts: "Unknown Attribute ContentBasedDeduplication.", and "You can
    specify the DeduplicationScope only when FifoQueue is set to true.")."""
    for name in settings:
        if name not in _FIELDS:
            raise InvalidAttributeName(name)
    if not fifo:
        for name in _FIFO_ONLY:
            if name in settings:
                raise InvalidAttributeName(name)
        for name in _FIFO_ONLY_EXTRA:
            if name in settings.get("extra", {}):
                raise InvalidAttributeName(
                    name, f"You can specify the {name} only when FifoQueue is set to true."
                )


def new_config(settings: Mapping[str, Any]) -> QueueConfig:
    """The config of a new queue: defaults, overridden by what was passed."""
    fifo = bool(settings.get("fifo", False))
    if settings.get("fifo") is False:
        # AWS knows FifoQueue only as "true": "false" is an unknown attribute.
        raise InvalidAttributeName("fifo")
    check_fields(settings, fifo=fifo)
    values = dict(settings)
    values["extra"] = dict(settings.get("extra", {}))
    check_extra(values["extra"])
    if fifo:
        fifo_rules.check_throughput_limit(values["extra"])
        values["group_deduplication"] = fifo_rules.groups_deduplicate(values["extra"])
    return QueueConfig(**values)


def changed_config(config: QueueConfig, settings: Mapping[str, Any]) -> QueueConfig:
    """`config` with the passed settings applied (SetQueueAttributes). The queue type
    cannot change; `extra` is merged key by key and an empty text removes a key."""
    if "fifo" in settings:
        if not config.fifo:
            raise InvalidAttributeName("fifo")
        if settings["fifo"] is not True:
            raise InvalidAttributeValue("fifo", "Modifying queue type is not supported.")
    check_fields(settings, fifo=config.fifo)
    check_extra(settings.get("extra", {}))
    values = {name: value for name, value in settings.items() if name != "extra"}
    extra = dict(config.extra)
    for name, text in settings.get("extra", {}).items():
        if text == "":
            extra.pop(name, None)
        else:
            extra[name] = text
    if config.extra.get(_KMS_KEY) and not extra.get(_KMS_KEY):
        _reset_kms(extra, settings.get("extra", {}))
    if config.fifo:
        fifo_rules.check_throughput_limit(extra)
    # group_deduplication stays as created (AWS: a later DeduplicationScope is shown, but
    # sends are deduplicated as before).
    return dataclasses.replace(config, **values, extra=extra)


def check_extra(extra: Mapping[str, str]) -> None:
    """The attributes kept as text: SQS's characters only, at most MAX_EXTRA_BYTES each,
    and a Policy within AWS's policy quotas."""
    for name, text in extra.items():
        if not characters.allowed(text):
            raise InvalidAttributeValue(
                name, "The value may only contain characters of the set "
                + characters.ALLOWED_SET + ".",
            )
        if len(text.encode("utf-8")) > MAX_EXTRA_BYTES:
            raise InvalidAttributeValue(
                name, f"The value must be at most {MAX_EXTRA_BYTES} bytes long."
            )
    permissions.check_policy(extra.get(permissions.ATTRIBUTE, ""))


def check_same(existing: QueueRecord, settings: Mapping[str, Any]) -> None:
    """CreateQueue on an existing name: every passed setting must equal the existing
    value (only the passed ones are compared, as AWS)."""
    for name, value in settings.items():
        if name == "extra":
            for attribute, text in value.items():
                if existing.config.extra.get(attribute) != text:
                    raise QueueNameTaken(existing.key, attribute)
        elif getattr(existing.config, name, None) != value:
            raise QueueNameTaken(existing.key, name)


def _reset_kms(extra: dict[str, str], passed: Mapping[str, str]) -> None:
    """A KMS key removed (KmsMasterKeyId set to ""): as recorded on AWS, the data key
    reuse period goes with it (even when passed in the same call) and SQS-managed
    encryption stays off unless this call turns it on."""
    extra.pop(_KMS_REUSE_PERIOD, None)
    if not passed.get(_SQS_MANAGED_SSE):
        extra[_SQS_MANAGED_SSE] = "false"


def check_tags_to_add(tags: Mapping[str, str], existing: Mapping[str, str]) -> None:
    """TagQueue's tags: at least one (AWS answers an empty TagQueue as one without its
    parameter), each within `check_tags`."""
    if not tags:
        raise MissingParameter("Tags")
    check_tags(tags, existing=existing)


def check_tag_keys(tag_keys: Sequence[str]) -> None:
    """UntagQueue's keys: at least one; AWS words an empty list as a key too short."""
    if not tag_keys:
        raise InvalidParameterRule(
            "TagKeys",
            "",
            f"Tag keys must be between 1 and {MAX_TAG_KEY_LENGTH} characters in length.",
        )


def check_tags(tags: Mapping[str, str], *, existing: Mapping[str, str] | None = None) -> None:
    """Tag keys are 1..128 characters, values 0..256, both of SQS's characters, and a
    queue holds at most 50 tags."""
    for tag_key, value in tags.items():
        if not (characters.allowed(tag_key) and characters.allowed(value)):
            raise InvalidParameterRule("Tags", "", _TAG_CHARACTERS)
        if not 1 <= len(tag_key) <= MAX_TAG_KEY_LENGTH:
            raise InvalidParameter(
                "Tags", tag_key, f"Tag keys must be between 1 and {MAX_TAG_KEY_LENGTH} characters."
            )
        if len(value) > MAX_TAG_VALUE_LENGTH:
            raise InvalidParameter(
                "Tags", value, f"Tag values must be at most {MAX_TAG_VALUE_LENGTH} characters."
            )
    if len({**(existing or {}), **tags}) > limits.MAX_TAGS_PER_QUEUE:
        raise too_many_tags(len(tags))


def too_many_tags(count: int) -> InvalidParameterRule:
    """The error for tags beyond MAX_TAGS_PER_QUEUE (`count` of them in the request);
    the wire raises it too, before decoding a list that is already too long."""
    return InvalidParameterRule(
        "Tags",
        str(count),
        f"Too many tags added for queue. The limit is {limits.MAX_TAGS_PER_QUEUE}.",
    )


async def check_dead_letter(store: QueueStore, source: QueueKey, config: QueueConfig) -> None:
    """A dead-letter target exists, is of the source's type (FIFO or standard), and
    its RedriveAllowPolicy lets `source` name it."""
    rule = config.dead_letter
    if rule is None:
        return
    target = await store.get_queue(rule.target)
    if target is None:
        raise InvalidAttributeValue("dead_letter", "Dead letter target does not exist.")
    if target.config.fifo != config.fifo:
        raise InvalidAttributeValue(
            "dead_letter", "Dead-letter queue must be same type of queue as the source."
        )
    if not redrive_allow.permits(target.config.extra.get(redrive_allow.ATTRIBUTE), source):
        raise InvalidAttributeValue(
            "dead_letter",
            f"Queue {source.name} is not allowed to use {rule.target.name} as its "
            "dead-letter queue: the RedriveAllowPolicy of the dead-letter queue denies it.",
        )
