"""HTTP/S delivery policies: their limits, and the retry schedule one gives.

A policy is a subscription's `{"healthyRetryPolicy": {...}}` or a topic's
`{"http": {"defaultHealthyRetryPolicy": {...}}}`. AWS's limits (SNS Developer Guide,
"Amazon SNS message delivery retries"): numRetries 0-100, minDelayTarget 1 up to
maxDelayTarget, maxDelayTarget up to 3,600 s, the no-delay, minimum-delay and
maximum-delay retries together at most numRetries; backoffFunction one of arithmetic,
exponential, geometric, linear. The retries run in four phases: immediate ones, ones at
the minimum delay, the backoff from minimum to maximum, ones at the maximum.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hopper.sns.errors import invalid

MAX_RETRIES = 100
MAX_DELAY = 3_600
_FUNCTIONS = ("arithmetic", "exponential", "geometric", "linear")


@dataclass(frozen=True)
class RetryPolicy:
    num_retries: int = 3
    min_delay: int = 20
    max_delay: int = 20
    no_delay_retries: int = 0
    min_delay_retries: int = 0
    max_delay_retries: int = 0
    backoff: str = "linear"


DEFAULT = RetryPolicy()


def check(text: str) -> None:
    """Raises InvalidParameter for a delivery policy AWS refuses."""
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        raise invalid("DeliveryPolicy: failed to parse JSON.") from None
    if not isinstance(parsed, dict):
        raise invalid("DeliveryPolicy: must be a JSON object.")
    retry = _retry_section(parsed)
    if retry is not None:
        _policy(retry)


def policy_of(subscription_policy: str | None, topic_policy: str | None) -> RetryPolicy:
    """The retry policy in force: the subscription's, else the topic's, else AWS's
    default (3 retries, 20 s apart). Unreadable texts count as absent (they were
    checked when set)."""
    for text in (subscription_policy, topic_policy):
        if not text:
            continue
        try:
            retry = _retry_section(json.loads(text))
            if retry is not None:
                return _policy(retry)
        except (ValueError, AttributeError, RecursionError):
            continue
    return DEFAULT


def _retry_section(parsed: Mapping[str, Any]) -> Mapping[str, Any] | None:
    section = parsed.get("healthyRetryPolicy")
    if section is None and isinstance(parsed.get("http"), dict):
        section = parsed["http"].get("defaultHealthyRetryPolicy")
    if section is not None and not isinstance(section, dict):
        raise invalid("DeliveryPolicy: healthyRetryPolicy must be an object.")
    return section


def _policy(section: Mapping[str, Any]) -> RetryPolicy:
    policy = RetryPolicy(
        num_retries=_int(section, "numRetries", DEFAULT.num_retries, 0, MAX_RETRIES),
        min_delay=_int(section, "minDelayTarget", DEFAULT.min_delay, 1, MAX_DELAY),
        max_delay=_int(section, "maxDelayTarget", DEFAULT.max_delay, 1, MAX_DELAY),
        no_delay_retries=_int(section, "numNoDelayRetries", 0, 0, MAX_RETRIES),
        min_delay_retries=_int(section, "numMinDelayRetries", 0, 0, MAX_RETRIES),
        max_delay_retries=_int(section, "numMaxDelayRetries", 0, 0, MAX_RETRIES),
        backoff=str(section.get("backoffFunction", DEFAULT.backoff)),
    )
    if policy.min_delay > policy.max_delay:
        raise invalid("DeliveryPolicy: minDelayTarget must be <= maxDelayTarget")
    phased = policy.no_delay_retries + policy.min_delay_retries + policy.max_delay_retries
    if phased > policy.num_retries:
        raise invalid("DeliveryPolicy: numRetries must be >= the sum of the phase retries")
    if policy.backoff not in _FUNCTIONS:
        raise invalid(f"DeliveryPolicy: backoffFunction must be one of {', '.join(_FUNCTIONS)}")
    return policy


def _int(section: Mapping[str, Any], name: str, default: int, low: int, high: int) -> int:
    value = section.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise invalid(f"DeliveryPolicy: {name} must be an integer from {low} to {high}")
    return value


def delay(policy: RetryPolicy, retry: int, rng: random.Random | None = None) -> float:
    """Seconds before retry number `retry` (1-based), jittered by up to 10% downwards
    so that many failed deliveries do not come back at the same instant."""
    base = _base_delay(policy, retry)
    jitter = (rng or random).uniform(0.9, 1.0)
    return 0.0 if base == 0 else max(float(policy.min_delay) * 0.9, base * jitter)


def _base_delay(policy: RetryPolicy, retry: int) -> float:
    if retry <= policy.no_delay_retries:
        return 0.0
    if retry <= policy.no_delay_retries + policy.min_delay_retries:
        return float(policy.min_delay)
    backoff_retries = (
        policy.num_retries - policy.no_delay_retries - policy.min_delay_retries
        - policy.max_delay_retries
    )
    step = retry - policy.no_delay_retries - policy.min_delay_retries
    if step > backoff_retries:
        return float(policy.max_delay)
    return _backoff(policy, step, backoff_retries)


def _backoff(policy: RetryPolicy, step: int, steps: int) -> float:
    """The delay of step `step` of `steps` growing from min_delay to max_delay."""
    low, high = float(policy.min_delay), float(policy.max_delay)
    if steps <= 1:
        return low
    share = (step - 1) / (steps - 1)
    if policy.backoff == "linear":
        return low + (high - low) * share
    if policy.backoff == "arithmetic":
        return low + (high - low) * share * share
    if policy.backoff == "geometric":
        return low * float((high / low) ** (share ** 0.5))
    return low * float((high / low) ** share)  # exponential
