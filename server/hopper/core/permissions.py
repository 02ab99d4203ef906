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

from hopper.core.errors import InvalidParameter

ATTRIBUTE = "Policy"
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
    return json.dumps(policy, separators=(",", ":"))


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
    except ValueError:
        return None
    return policy if isinstance(policy, dict) else None


def _statements(policy: dict[str, Any]) -> list[dict[str, Any]]:
    statements = policy.get("Statement", [])
    if isinstance(statements, dict):
        statements = [statements]
    return [s for s in statements if isinstance(s, dict)]
