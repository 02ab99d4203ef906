"""Whether a message passes a subscription's filter policy. Pure functions.

A message's values under a key: for message attributes, a String attribute's text, a
Number attribute's number, a String.Array attribute's elements (Binary attributes are
present but match no value); for the body (`FilterPolicyScope=MessageBody`, the body a
JSON object), the value at the key's path, an array's elements, arrays along the path
walked into. A key matches when any of its conditions matches any of its values;
`exists` asks only whether there are values; `anything-but` matches when none of them
is excluded (and there are some).
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from hopper.core.model import MessageAttribute
from hopper.sns.filter_policies import Branch, Condition, Path, Policy

Values = list[Any] | None  # None: the key is absent


def matches_attributes(policy: Policy, attributes: Mapping[str, MessageAttribute]) -> bool:
    values = {name: _attribute_values(attribute) for name, attribute in attributes.items()}
    return any(_branch(branch, lambda path: values.get(path[0])) for branch in policy.branches)


def matches_body(policy: Policy, body: str) -> bool:
    """The body scope: a body that is not a JSON object matches no policy (AWS)."""
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        return False
    if not isinstance(document, dict):
        return False
    return any(_branch(branch, lambda path: _body_values(document, path))
               for branch in policy.branches)


def _branch(branch: Branch, lookup: Any) -> bool:
    return all(_key(conditions, lookup(path)) for path, conditions in branch)


def _key(conditions: Sequence[Condition], values: Values) -> bool:
    return any(_condition(condition, values) for condition in conditions)


def _condition(condition: Condition, values: Values) -> bool:
    if condition.kind == "exists":
        return (values is not None) is bool(condition.operand)
    if values is None:
        return False
    if condition.kind == "anything-but":
        return bool(values) and not any(_excluded(condition.operand, v) for v in values)
    return any(_value(condition, value) for value in values)


def _value(condition: Condition, value: Any) -> bool:
    kind, operand = condition.kind, condition.operand
    if kind == "exact":
        return _same(operand, value)
    if kind == "numeric":
        return _is_number(value) and all(_compare(op, value, n) for op, n in operand)
    if not isinstance(value, str):
        return False
    if kind == "equals-ignore-case":
        return value.lower() == str(operand).lower()
    if kind in ("prefix", "suffix"):
        text = value.lower() if condition.ignore_case else value
        return text.startswith(operand) if kind == "prefix" else text.endswith(operand)
    if kind == "cidr":
        return _in_network(value, operand)
    return False


def _excluded(operand: Any, value: Any) -> bool:
    if isinstance(operand, Condition):  # anything-but with prefix, suffix, ignore-case
        if operand.kind == "equals-ignore-case":
            return isinstance(value, str) and value.lower() == operand.operand.lower()
        return _value(operand, value)
    return any(_same(excluded, value) for excluded in operand)


def _same(expected: Any, value: Any) -> bool:
    # Types first: True is 1 in Python, and "1" is not 1 to SNS.
    if isinstance(expected, (str, bool)) or expected is None:
        return type(expected) is type(value) and expected == value
    return _is_number(value) and float(value) == expected


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _compare(op: str, value: float, bound: float) -> bool:
    if op == "=":
        return value == bound
    if op == "<":
        return value < bound
    if op == "<=":
        return value <= bound
    if op == ">":
        return value > bound
    return value >= bound


def _in_network(value: str, network: Any) -> bool:
    try:
        return ipaddress.ip_address(value) in network
    except (ValueError, RecursionError):
        return False


def _attribute_values(attribute: MessageAttribute) -> list[Any]:
    kind = attribute.data_type.split(".", 1)[0]
    text = attribute.string_value
    if kind == "Binary" or text is None:
        return []
    if attribute.data_type == "String.Array":
        try:
            parsed = json.loads(text)
        except ValueError:
            return []
        return list(parsed) if isinstance(parsed, list) else []
    if kind == "Number":
        try:
            return [float(text)]
        except ValueError:
            return []
    return [text]


def _body_values(document: Any, path: Path) -> Values:
    found = list(_walk(document, path))
    if not found:
        return None
    out: list[Any] = []
    for value in found:
        out.extend(value if isinstance(value, list) else [value])
    return out


def _walk(node: Any, path: Path) -> Iterator[Any]:
    if not path:
        yield node
        return
    if isinstance(node, list):
        for item in node:
            yield from _walk(item, path)
    elif isinstance(node, dict) and path[0] in node:
        yield from _walk(node[path[0]], path[1:])
