"""Whether a send created its message, told in hopper's extension headers (vanilla SDKs
ignore them; boto3 shows them in ResponseMetadata.HTTPHeaders).

A send collapses onto an existing message when its MessageDeduplicationId is held: on a
FIFO queue within the 5-minute window, on a standard queue while the message that took
the key lives (hopper's live deduplication). The response then names that message.
"""

from __future__ import annotations

from collections.abc import Sequence

from hopper.core.model import SendResult
from hopper.wire.context import RequestContext

# SendMessage: "true" when the call collapsed onto an existing message, else "false".
DUPLICATE_HEADER = "x-hopper-duplicate"
# SendMessageBatch: the Ids of the entries that collapsed, comma-separated (batch entry
# Ids are [A-Za-z0-9_-]); empty when none did.
DUPLICATE_ENTRIES_HEADER = "x-hopper-duplicate-entries"


def tell(ctx: RequestContext, result: SendResult) -> None:
    ctx.response_headers[DUPLICATE_HEADER] = "true" if result.duplicate else "false"


def tell_batch(ctx: RequestContext, collapsed: Sequence[str]) -> None:
    ctx.response_headers[DUPLICATE_ENTRIES_HEADER] = ",".join(collapsed)
