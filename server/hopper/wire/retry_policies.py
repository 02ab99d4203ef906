"""Hopper.RetryPolicy as the wire spells it (a hopper extension queue attribute).

`{"baseDelaySeconds": 2, "maxDelaySeconds": 300, "jitter": "full"}`: the backoff after
a lease ends without a delete (core/retries.py). Read like RedrivePolicy, refused as AWS
refuses a bad RedrivePolicy (InvalidParameterValue, the text quoted, a reason), and an
empty text removes the policy.
"""

from __future__ import annotations

import json
from typing import Any

from hopper.core.retries import JITTERS, MAX_DELAY_SECONDS, RetryPolicy
from hopper.wire.attribute_names import RETRY_POLICY
from hopper.wire.errors import SqsError, invalid_parameter_value
from hopper.wire.redrive_policies import json_document

_MEMBERS = ("baseDelaySeconds", "maxDelaySeconds", "jitter")


def parse_retry_policy(name: str, text: str) -> RetryPolicy | None:
    if text.strip() == "":
        return None
    policy = json_document(text)
    if not isinstance(policy, dict):
        raise _error(text, "Retry policy is not a valid JSON map.")
    for member in policy:
        if member not in _MEMBERS:
            raise _error(text, f"Unknown member {member}; known: {', '.join(_MEMBERS)}.")
    if "baseDelaySeconds" not in policy:
        raise _error(text, "Retry policy does not contain mandatory attribute: baseDelaySeconds.")
    base = _seconds(text, "baseDelaySeconds", policy["baseDelaySeconds"], low=0.0)
    maximum = _seconds(text, "maxDelaySeconds", policy.get("maxDelaySeconds", 900), low=base)
    jitter = policy.get("jitter", "full")
    if jitter not in JITTERS:
        raise _error(
            text, f"Invalid value for jitter: {jitter}, valid values are full, equal, none."
        )
    return RetryPolicy(base, maximum, jitter)


def _seconds(text: str, member: str, value: Any, *, low: float) -> float:
    """A number of seconds above `low` (base: above 0; maximum: at least the base) and
    at most MAX_DELAY_SECONDS; a JSON number or its text."""
    number: float | None = None
    if isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            number = None
    in_range = number is not None and number <= MAX_DELAY_SECONDS and (
        number > low if member == "baseDelaySeconds" else number >= low
    )
    if number is None or not in_range:
        raise _error(
            text,
            f"Invalid value for {member}: {value}, valid values are from {low:g} "
            f"({'exclusive' if member == 'baseDelaySeconds' else 'inclusive'}) to "
            f"{MAX_DELAY_SECONDS:g} seconds.",
        )
    return number


def _error(text: str, reason: str) -> SqsError:
    return invalid_parameter_value(RETRY_POLICY, text, reason)


def retry_policy_text(policy: RetryPolicy) -> str:
    return json.dumps(
        {
            "baseDelaySeconds": _number(policy.base),
            "maxDelaySeconds": _number(policy.maximum),
            "jitter": policy.jitter,
        },
        separators=(",", ":"),
    )


def _number(seconds: float) -> float | int:
    return int(seconds) if seconds == int(seconds) else seconds
