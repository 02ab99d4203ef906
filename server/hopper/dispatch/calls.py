"""One call of a dispatch target, and its outcome for the batch it carried."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from hopper.core.model import Delivery
from hopper.dispatch.connections import AnswerError, Connection
from hopper.dispatch.payloads import failed_items

# How much of a failed answer is kept as the messages' Hopper.LastError.
ERROR_BYTES = 1024


@dataclass(frozen=True)
class Outcome:
    """`failed`: the ids of the messages the call failed (all of them when the call
    failed as a whole); `error` is why, kept with them (Hopper.LastError); `label`
    names the outcome for metrics: success, partial, error, timeout, refused."""

    failed: frozenset[str]
    error: str | None
    label: str


async def post(
    connection: Connection,
    body: bytes,
    headers: dict[str, str],
    timeout: float,
    batch: Sequence[Delivery],
) -> Outcome:
    """POST `body` and classify the answer: a 2xx deletes the batch but for the items
    a batchItemFailures answer names; an error status, a Lambda function error (the
    runtime interface emulator answers 200 with X-Amz-Function-Error), a timeout or a
    refused connection fails it all."""
    everything = frozenset(delivery.message.id for delivery in batch)
    try:
        status, answer_headers, content = await connection.post(body, headers, timeout)
    except TimeoutError:
        return Outcome(everything, f"timeout: no answer within {timeout:g} s", "timeout")
    except (OSError, AnswerError, asyncio.IncompleteReadError) as error:
        reason = str(error) or type(error).__name__
        return Outcome(everything, f"connection failed: {reason}"[:ERROR_BYTES], "refused")
    function_error = answer_headers.get("x-amz-function-error")
    if not 200 <= status < 300 or function_error:
        return Outcome(everything, _error_text(status, content), "error")
    failed = failed_items(content, batch)
    if failed is None:
        return Outcome(everything, _error_text(status, content), "error")
    if failed:
        return Outcome(failed, _error_text(status, content), "partial")
    return Outcome(frozenset(), None, "success")


def _error_text(status: int, content: bytes) -> str:
    return f"HTTP {status}: " + content[:ERROR_BYTES].decode("utf-8", "replace")
