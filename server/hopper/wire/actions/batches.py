"""The result shape of the three batch actions: `Successful[]` and `Failed[]`.

SQS answers a batch with HTTP 200 even when entries fail; each failure names its
entry, its code and whose fault it is. A list with no entries is left out, as the
AWS responses botocore parses have no member for it.
"""

from __future__ import annotations

from typing import Any

from hopper.core.errors import QueueError
from hopper.wire.errors import SqsError, from_core

_PREFIX = "AWS.SimpleQueueService."


def failure(entry_id: str, error: SqsError | QueueError) -> dict[str, Any]:
    """A `Failed[]` entry. Its Code is the query code without the service prefix
    (AWS: `InvalidParameterValue`, `ReceiptHandleIsInvalid`, ...)."""
    wire = error if isinstance(error, SqsError) else from_core(error, in_batch=True)
    code = wire.code
    return {
        "Id": entry_id,
        "SenderFault": code.sender,
        "Code": code.query_code.removeprefix(_PREFIX),
        "Message": wire.message,
    }


def batch_result(successful: list[dict[str, Any]], failed: list[dict[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    if successful:
        result["Successful"] = successful
    if failed:
        result["Failed"] = failed
    return result
