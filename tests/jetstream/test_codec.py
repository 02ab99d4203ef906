"""The JetStream codec's hand-written copies of a stored message and a delivery keep every
field `dataclasses.replace` would: they name the fields one by one (for speed), so a
field added to the model and forgotten there would be dropped silently. Each field gets
a value of its own here, whatever fields the model has then."""

from __future__ import annotations

import dataclasses
from typing import Any

from hopper.core.model import Delivery, MessageAttribute, QueueKey, StoredMessage
from hopper.store.jetstream import codec


def _distinct(cls: type[Any], **given: Any) -> Any:
    """An instance of `cls` whose every field not given holds a value no other has."""
    values: dict[str, Any] = dict(given)
    for number, field in enumerate(dataclasses.fields(cls)):
        if field.name not in values:
            values[field.name] = f"{field.name}-{number}"
    return cls(**values)


def test_with_body_keeps_every_other_field() -> None:
    stored = _distinct(StoredMessage, dead_letter_source=QueueKey("1", "src"))
    body = ("the body", {"a": MessageAttribute("String", "x", None)}, "trace")

    filled = codec.with_body(stored, body)

    assert filled == dataclasses.replace(
        stored, body=body[0], attributes=body[1], trace_header=body[2]
    )


def test_delivered_keeps_every_other_field_and_resolves_the_token() -> None:
    message = _distinct(StoredMessage)
    delivery = _distinct(Delivery, message=message, token=-3)
    filled = codec.with_body(message, ("b", {}, None))

    out = codec.delivered(delivery, filled, revision=7)

    assert out == dataclasses.replace(delivery, message=filled, token=codec.token(-3, 7))
    assert out.token == 7 * codec.TOKENS_PER_WRITE + 2
