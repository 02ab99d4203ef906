"""Which SQS actions the scenarios call, per protocol, against botocore's list of them.

The list of actions is botocore's installed model (`sqs/2012-11-05`), the authority on
the API surface; an action no scenario calls over a protocol is a gap in the comparison.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

PROTOCOLS = ("json", "query")


def actions() -> list[str]:
    """Every SQS action in botocore's installed model, sorted."""
    import botocore.session

    model = botocore.session.get_session().get_service_model("sqs")
    return sorted(model.operation_names)


def called(recordings: Iterable[list[dict[str, Any]]]) -> dict[str, set[str]]:
    """The actions called per protocol in `recordings` (one answer list per scenario)."""
    seen: dict[str, set[str]] = {protocol: set() for protocol in PROTOCOLS}
    for answers in recordings:
        for answer in answers:
            if answer.get("protocol") in seen:
                seen[answer["protocol"]].add(str(answer.get("op")))
    return seen


def errors(recordings: Iterable[list[dict[str, Any]]]) -> dict[str, set[str]]:
    """The error codes answered per protocol in `recordings`."""
    seen: dict[str, set[str]] = {protocol: set() for protocol in PROTOCOLS}
    for answers in recordings:
        for answer in answers:
            error = answer.get("error")
            if answer.get("protocol") in seen and isinstance(error, dict):
                seen[answer["protocol"]].add(str(error.get("Code")))
    return seen


def missing(recordings: list[list[dict[str, Any]]]) -> dict[str, list[str]]:
    """Per protocol, the model's actions that no recording calls."""
    seen = called(recordings)
    return {protocol: [a for a in actions() if a not in seen[protocol]] for protocol in PROTOCOLS}
