"""FIFO rules that are not about one message: the deduplication scope and throughput
attributes, and receive attempt ids.

DeduplicationScope and FifoThroughputLimit are kept among a queue's `extra` attributes
(by their SQS names, like the Policy); the core reads them here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from hopper.core.errors import InvalidAttributeValue, InvalidParameter
from hopper.core.model import QueueConfig

DEDUPLICATION_SCOPE = "DeduplicationScope"
FIFO_THROUGHPUT_LIMIT = "FifoThroughputLimit"
# MessageGroupId, MessageDeduplicationId and ReceiveRequestAttemptId: 1..128
# alphanumerics and punctuation.
TOKEN_ID = re.compile(r"[A-Za-z0-9!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~]{1,128}")


def groups_deduplicate(extra: Mapping[str, str]) -> bool:
    """Whether a queue created with these attributes scopes deduplication ids to groups."""
    return extra.get(DEDUPLICATION_SCOPE) == "messageGroup"


def check_throughput_limit(extra: Mapping[str, str]) -> None:
    """AWS: "The perMessageGroupId value is allowed only when the value for
    DeduplicationScope is messageGroup" (the queue's values after the change)."""
    per_group = extra.get(FIFO_THROUGHPUT_LIMIT) == "perMessageGroupId"
    if per_group and not groups_deduplicate(extra):
        raise InvalidAttributeValue(
            FIFO_THROUGHPUT_LIMIT,
            "perMessageGroupId is allowed only when the value for DeduplicationScope is "
            "messageGroup.",
        )


def deduplication_key(config: QueueConfig, group_id: str, deduplication_id: str) -> str | None:
    """The key a FIFO message's window is kept under when it is not its deduplication id:
    with group deduplication, the group and the id (length-prefixed, since a group id may
    itself contain the separator)."""
    if not config.group_deduplication:
        return None
    return f"{len(group_id)}:{group_id}:{deduplication_id}"


def check_attempt_id(attempt_id: str) -> None:
    if TOKEN_ID.fullmatch(attempt_id) is None:
        raise InvalidParameter(
            "ReceiveRequestAttemptId",
            attempt_id,
            "ReceiveRequestAttemptId can only include alphanumeric and punctuation "
            "characters. 1 to 128 in length.",
        )
