"""AddPermission / RemovePermission: the queue's `Policy` document, statement by statement.

The document is kept as JSON text in the queue's `extra` (as SetQueueAttributes stores
a Policy), shaped as AWS shapes it: `{"Version": "2008-10-17", "Id": <policy id>,
"Statement": [...]}`, one statement per label (its `Sid`). The wire layer builds each
statement, since it holds the ARN spellings. Nothing is enforced: hopper serves one
account and grants every request.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from hopper.core.errors import InvalidAttributeValue, InvalidParameter, OverLimit

ATTRIBUTE = "Policy"
# AWS's quotas on an SQS policy ("Amazon SQS policy quotas" in the developer guide):
# every document a queue keeps is held to them, however it was built.
MAX_POLICY_BYTES = 8_192
MAX_PRINCIPALS = 50
MAX_STATEMENTS = 20
MAX_ACTIONS_PER_STATEMENT = 7
MAX_CONDITIONS = 10
# The version AWS writes into a policy that AddPermission creates (LocalStack's
# AWS-recorded snapshot test_sqs_permission_lifecycle); a policy set as an attribute
# keeps its own.
VERSION = "2008-10-17"


def with_statement(
    policy_text: str | None, label: str, statement: Mapping[str, Any], policy_id: str
) -> str:
    """The policy with `statement` appended. Raises InvalidParameter when a statement
    already has the label."""
    policy = _document(policy_text) or {"Version": VERSION, "Id": policy_id, "Statement": []}
    statements = _statements(policy)
    if any(s.get("Sid") == label for s in statements):
        raise InvalidParameter("Label", label, "Already exists.")
    policy["Statement"] = [*statements, dict(statement)]
    text = json.dumps(policy, separators=(",", ":"))
    problem = policy_problem(text)
    if problem is not None:
        # AWS: AddPermission answers OverLimit "if the maximum number of permissions
        # for the queue is reached".
        raise OverLimit(problem)
    return text


def check_policy(text: str) -> None:
    """A Policy set as a queue attribute: within AWS's quotas, or InvalidAttributeValue.
    (Its JSON syntax is the wire's to check; an empty text removes the policy.)"""
    problem = policy_problem(text) if text else None
    if problem is not None:
        raise InvalidAttributeValue(ATTRIBUTE, problem)


def policy_problem(text: str) -> str | None:
    """Which quota the policy document `text` breaks, or None."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_POLICY_BYTES:
        return f"Policy size exceeds the maximum of {MAX_POLICY_BYTES} bytes."
    policy = _document(text)
    statements = _statements(policy) if policy is not None else []
    if len(statements) > MAX_STATEMENTS:
        return f"Policy has more than the maximum of {MAX_STATEMENTS} statements."
    if sum(_count(s.get("Principal")) for s in statements) > MAX_PRINCIPALS:
        return f"Policy has more than the maximum of {MAX_PRINCIPALS} principals."
    if any(_count(s.get("Action")) > MAX_ACTIONS_PER_STATEMENT for s in statements):
        return (
            f"A policy statement has more than the maximum of {MAX_ACTIONS_PER_STATEMENT} "
            "actions."
        )
    if sum(_count(s.get("Condition")) for s in statements) > MAX_CONDITIONS:
        return f"Policy has more than the maximum of {MAX_CONDITIONS} conditions."
    return None


def _count(value: Any) -> int:
    """How many principals, actions or conditions a statement's member names:
    `"*"` or one text is one, a list its length, a map (`{"AWS": [...]}` or a
    Condition's operators) the count over its values."""
    if value is None:
        return 0
    if isinstance(value, list):
        return len(value)
    if isinstance(value, dict):
        return sum(max(_count(item), 1) for item in value.values())
    return 1


def without_statement(policy_text: str | None, label: str) -> str | None:
    """The policy without the label's statement (None when no statement is left).
    Raises InvalidParameter when no statement has the label."""
    policy = _document(policy_text)
    statements = _statements(policy) if policy is not None else []
    kept = [s for s in statements if s.get("Sid") != label]
    if policy is None or len(kept) == len(statements):
        raise InvalidParameter("Label", label, "can't find label.")
    if not kept:
        return None
    policy["Statement"] = kept
    return json.dumps(policy, separators=(",", ":"))


def _document(text: str | None) -> dict[str, Any] | None:
    if not text:
        return None
    try:
        policy = json.loads(text)
    except (ValueError, RecursionError):  # too deep to read is unreadable too
        return None
    return policy if isinstance(policy, dict) else None


def _statements(policy: dict[str, Any]) -> list[dict[str, Any]]:
    statements = policy.get("Statement", [])
    if isinstance(statements, dict):
        statements = [statements]
    return [s for s in statements if isinstance(s, dict)]
