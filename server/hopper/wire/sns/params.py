"""An SNS request's parameters, read from its form fields (`Attributes.entry.1.key`,
`Tags.member.1.Key`, `MessageAttributes.entry.1.Value.DataType`, ...), as botocore's
query serializer writes them for the 2010-03-31 model."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from hopper.core.model import MessageAttribute
from hopper.sns.errors import InvalidParameter, invalid

Tree = dict[str, Any]


def tree(fields: Mapping[str, str]) -> Tree:
    """The fields as nested dicts by their dotted names; a value sits under "" ."""
    root: Tree = {}
    for name, value in fields.items():
        node = root
        for segment in name.split("."):
            child = node.setdefault(segment, {})
            if not isinstance(child, dict):
                break
            node = child
        else:
            node[""] = value
    return root


def text(node: Tree, name: str) -> str | None:
    child = node.get(name)
    return child.get("") if isinstance(child, dict) else None


def required(node: Tree, name: str) -> str:
    value = text(node, name)
    if value is None:
        raise InvalidParameter(f"Invalid parameter: {name}")
    return value


def flag(node: Tree, name: str) -> bool:
    return (text(node, name) or "").lower() == "true"


def indexed(node: Tree, name: str, wrapper: str) -> list[Tree]:
    """The `<name>.<wrapper>.N` children, in N order."""
    parent = node.get(name, {}).get(wrapper, {})
    items = [(int(k), v) for k, v in parent.items() if k.isdigit() and len(k) < 7]
    return [value for _, value in sorted(items, key=lambda pair: pair[0])]


def strings(node: Tree, name: str) -> list[str]:
    return [item.get("", "") for item in indexed(node, name, "member")]


def entries(node: Tree, name: str) -> dict[str, str]:
    """A map of strings: `<name>.entry.N.key` / `.value`."""
    out = {}
    for entry in indexed(node, name, "entry"):
        key = text(entry, "key")
        if key is not None:
            out[key] = text(entry, "value") or ""
    return out


def tags(node: Tree, name: str) -> dict[str, str]:
    out = {}
    for member in indexed(node, name, "member"):
        key = text(member, "Key")
        if key is None:
            raise invalid("Tag Key is required")
        out[key] = text(member, "Value") or ""
    return out


def message_attributes(node: Tree) -> dict[str, MessageAttribute]:
    out = {}
    for entry in indexed(node, "MessageAttributes", "entry"):
        name = text(entry, "Name")
        value = entry.get("Value", {})
        if name is None:
            continue
        data_type = text(value, "DataType")
        if data_type is None:
            raise InvalidParameter(
                f"Invalid parameter: The message attribute '{name}' must contain a "
                "message attribute type."
            )
        out[name] = MessageAttribute(data_type, text(value, "StringValue"),
                                     _binary(name, text(value, "BinaryValue")))
    return out


def _binary(name: str, value: str | None) -> bytes | None:
    if value is None:
        return None
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise invalid(f"The message attribute '{name}' has an invalid binary value") from None
