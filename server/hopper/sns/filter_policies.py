"""Filter policies: the text a subscription gives, checked against AWS's rules and
read into a `Policy` that filter_matching.py applies. Pure functions.

The language (SNS Developer Guide, "Amazon SNS message filtering"): a JSON object of
keys, each with an array of conditions any one of which must match (all keys must);
`$or` takes an array of such objects. A condition is a string or number (exact), true,
false or null (body scope), or an object: `prefix`, `suffix` (each also with
`equals-ignore-case`), `anything-but` (a value, a list, `prefix`, `suffix` or
`equals-ignore-case`), `numeric` (`=` a number, or one or two of `<`, `<=`, `>`, `>=`),
`exists`, `equals-ignore-case`, `cidr`. With `FilterPolicyScope=MessageBody` keys nest
(an object in place of an array). AWS's limits: at most 5 keys in a policy (leaf keys,
per `$or` branch), at most 150 combinations of values (the product of each key's
condition count, summed over `$or` branches), 256 KiB of text.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hopper.sns.errors import FilterPolicyLimitExceeded, InvalidParameter

MAX_KEYS = 5
MAX_COMBINATIONS = 150
MAX_POLICY_BYTES = 256 * 1024
# AWS's numeric matching works on values from -1e9 to 1e9 (five decimals).
NUMERIC_LIMIT = 1_000_000_000
_NUMERIC_OPERATORS = ("<", "<=", ">", ">=")


@dataclass(frozen=True)
class Condition:
    """One condition of a key. `kind` is exact, prefix, suffix, equals-ignore-case,
    anything-but, numeric, exists or cidr; `operand` its checked argument; `ignore_case`
    for prefix and suffix with equals-ignore-case (and anything-but's case-blind lists)."""

    kind: str
    operand: Any
    ignore_case: bool = False


Path = tuple[str, ...]
# One way to match: every key (a path into the body, or one attribute name) with its
# conditions, any of which must match.
Branch = tuple[tuple[Path, tuple[Condition, ...]], ...]


@dataclass(frozen=True)
class Policy:
    """A checked policy: it matches when any branch matches (one branch unless `$or`)."""

    branches: tuple[Branch, ...]


def check(text: str, *, body_scope: bool) -> Policy:
    """The policy of `text`; raises InvalidParameter (malformed) or
    FilterPolicyLimitExceeded-worded InvalidParameter (too many keys, too complex), with
    AWS's texts."""
    if len(text.encode("utf-8")) > MAX_POLICY_BYTES:
        raise _invalid("Filter policy is too long")
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        raise _invalid("failed to parse JSON.") from None
    if not isinstance(parsed, dict):
        raise _invalid("Filter policy must be a JSON object")
    try:
        branches = tuple(_branches(parsed, (), body_scope))
    except RecursionError:
        raise _invalid("Filter policy is too complex") from None
    for branch in branches:
        if len(branch) > MAX_KEYS:
            raise _invalid(f"Filter policy can not have more than {MAX_KEYS} keys")
    if sum(_combinations(branch) for branch in branches) > MAX_COMBINATIONS:
        raise _invalid("Filter policy is too complex")
    return Policy(branches)


def read(text: str, *, body_scope: bool) -> Policy | None:
    """A stored policy (checked when it was set), or None for none."""
    return check(text, body_scope=body_scope) if text else None


def _invalid(reason: str) -> InvalidParameter:
    return InvalidParameter(f"Invalid parameter: FilterPolicy: {reason}")


def _combinations(branch: Branch) -> int:
    total = 1
    for _, conditions in branch:
        total *= len(conditions)
    return total


def _branches(node: Mapping[str, Any], path: Path, body_scope: bool) -> list[Branch]:
    """Every branch of the object `node` at `path`: the product of its keys' branches,
    `$or` contributing one per alternative."""
    branches: list[Branch] = [()]
    for key, value in node.items():
        if key == "$or":
            alternatives = _alternatives(value, path, body_scope)
        elif isinstance(value, list):
            alternatives = [((path + (key,), _conditions(value, body_scope)),)]
        elif isinstance(value, dict):
            if not body_scope:
                raise InvalidParameter(
                    "Invalid parameter: Filter policy scope MessageAttributes does not "
                    "support nested filter policy"
                )
            alternatives = _branches(value, path + (key,), body_scope)
        else:
            raise _invalid(f'"{key}" must be an object or an array')
        branches = [done + more for done in branches for more in alternatives]
        if len(branches) > MAX_COMBINATIONS:
            raise _invalid("Filter policy is too complex")
    return branches


def _alternatives(value: Any, path: Path, body_scope: bool) -> list[Branch]:
    if not isinstance(value, list) or len(value) < 2 or not all(
        isinstance(item, dict) for item in value
    ):
        raise _invalid("$or must be an array of at least two objects")
    out: list[Branch] = []
    for item in value:
        out.extend(_branches(item, path, body_scope))
    return out


def _conditions(values: Sequence[Any], body_scope: bool) -> tuple[Condition, ...]:
    if not values:
        raise _invalid("Empty arrays are not allowed")
    return tuple(_condition(value, body_scope) for value in values)


def _condition(value: Any, body_scope: bool) -> Condition:
    if isinstance(value, dict):
        return _operator(value)
    if isinstance(value, str):
        return Condition("exact", value)
    if isinstance(value, bool) or value is None:
        return Condition("exact", value)
    if isinstance(value, int | float):
        return Condition("exact", _number(value, "Match value"))
    raise _invalid("Match value must be String, number, true, false, or null")


def _operator(value: Mapping[str, Any]) -> Condition:
    if len(value) != 1:
        raise _invalid("Only one key allowed in match expression")
    [(name, operand)] = value.items()
    if name in ("prefix", "suffix"):
        return _affix(name, operand)
    if name == "equals-ignore-case":
        return Condition(name, _string(name, operand))
    if name == "anything-but":
        return _anything_but(operand)
    if name == "numeric":
        return Condition(name, _numeric(operand))
    if name == "exists":
        if not isinstance(operand, bool):
            raise _invalid("exists match pattern must be either true or false.")
        return Condition(name, operand)
    if name == "cidr":
        return Condition(name, _network(operand))
    raise _invalid(f"Unrecognized match type {name}")


def _affix(name: str, operand: Any) -> Condition:
    if isinstance(operand, dict) and list(operand) == ["equals-ignore-case"]:
        return Condition(name, _string(name, operand["equals-ignore-case"]).lower(), True)
    return Condition(name, _string(name, operand))


def _string(name: str, operand: Any) -> str:
    if not isinstance(operand, str):
        raise _invalid(f"{name} match pattern must be a string")
    return operand


def _anything_but(operand: Any) -> Condition:
    if isinstance(operand, dict):
        inner = _operator(operand)
        if inner.kind not in ("prefix", "suffix", "equals-ignore-case") or inner.ignore_case:
            raise _invalid("Value of anything-but must be an array or single string/number value.")
        return Condition("anything-but", inner)
    values = operand if isinstance(operand, list) else [operand]
    if not values:
        raise _invalid("Empty arrays are not allowed")
    out = []
    for item in values:
        if isinstance(item, bool) or item is None or not isinstance(item, str | int | float):
            raise _invalid(
                "Value of anything-but must be an array or single string/number value."
            )
        out.append(item if isinstance(item, str) else _number(item, "anything-but"))
    return Condition("anything-but", tuple(out))


def _numeric(operand: Any) -> tuple[tuple[str, float], ...]:
    if not isinstance(operand, list) or not operand:
        raise _invalid("Value of numeric must be an array.")
    if operand[0] == "=":
        if len(operand) != 2:
            raise _invalid("Too many elements in numeric expression")
        return (("=", _number(operand[1], "=")),)
    pairs = []
    items = list(operand)
    while items:
        op = items.pop(0)
        if op not in _NUMERIC_OPERATORS:
            raise _invalid(f"Unrecognized numeric range operator: {op}")
        if not items:
            raise _invalid(f"Value of {op} must be numeric")
        pairs.append((op, _number(items.pop(0), op)))
    return _range(pairs)


def _range(pairs: list[tuple[str, float]]) -> tuple[tuple[str, float], ...]:
    if len(pairs) > 2:
        raise _invalid("Too many elements in numeric expression")
    if len(pairs) == 2:
        (low_op, low), (high_op, high) = pairs
        if low_op not in (">", ">=") or high_op not in ("<", "<="):
            raise _invalid(f"Bad numeric range operator: {high_op}")
        if low >= high:
            raise _invalid("Bottom must be less than top")
    return tuple(pairs)


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _invalid(f"Value of {name} must be numeric")
    if not -NUMERIC_LIMIT <= value <= NUMERIC_LIMIT:
        raise _invalid(f"Value of {name} must be between -1.0E9 and 1.0E9 inclusive")
    return float(value)


def _network(operand: Any) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    if not isinstance(operand, str):
        raise _invalid("Malformed CIDR, one '/' required")
    if "/" not in operand:
        raise _invalid("Malformed CIDR, one '/' required")
    try:
        return ipaddress.ip_network(operand, strict=False)
    except ValueError:
        raise _invalid(f"Nonstandard IP address: {operand.split('/')[0]}") from None


__all__ = ["Condition", "FilterPolicyLimitExceeded", "Policy", "check", "read"]
