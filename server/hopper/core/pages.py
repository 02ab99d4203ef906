"""List pagination: MaxResults bounds and opaque NextToken values.

A token is the URL-safe base64 of the last name on the page, so the next page starts
after it; clients must treat it as opaque.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import AsyncIterator, Callable

from hopper.core import limits
from hopper.core.errors import InvalidParameter
from hopper.core.model import QueueKey, QueuePage, QueueRecord
from hopper.core.store import QueueStore

_PREFIX = "hopper:"


def page_size(max_results: int | None) -> int:
    """The page size for `max_results` (None: the 1000 maximum)."""
    if max_results is None:
        return limits.MAX_LIST_QUEUES_RESULTS
    if not 1 <= max_results <= limits.MAX_LIST_QUEUES_RESULTS:
        raise InvalidParameter(
            "MaxResults",
            str(max_results),
            f"MaxResults must be an integer between 1 and {limits.MAX_LIST_QUEUES_RESULTS}.",
        )
    return max_results


def encode_token(last_name: str) -> str:
    return base64.urlsafe_b64encode((_PREFIX + last_name).encode()).decode()


def decode_token(token: str | None) -> str | None:
    """The name a page starts after, or None. Raises InvalidParameter for a token
    hopper did not issue."""
    if token is None:
        return None
    try:
        text = base64.urlsafe_b64decode(token.encode("ascii")).decode()
    except (binascii.Error, UnicodeError, ValueError):
        text = ""
    if not text.startswith(_PREFIX):
        raise InvalidParameter("NextToken", token, "Invalid NextToken value.")
    return text[len(_PREFIX):]


def page_of(keys: list[QueueKey], size: int, *, paged: bool) -> QueuePage:
    """One page of `keys` (fetched with one more than `size` to know if more exist).
    Without MaxResults, SQS returns up to 1000 queues and never a token."""
    more = len(keys) > size
    keys = keys[:size]
    token = encode_token(keys[-1].name) if paged and more and keys else None
    return QueuePage(keys=keys, next_token=token)


async def all_queues(
    store: QueueStore, page: int = 1000, *, keep: Callable[[str], bool] | None = None
) -> AsyncIterator[QueueRecord]:
    """Every queue of every account (or of the accounts `keep` keeps), by account then
    name, read `page` at a time."""
    for account in await store.accounts():
        if keep is not None and not keep(account):
            continue
        after: str | None = None
        while True:
            records = await store.list_queues(account, after=after, limit=page)
            for record in records:
                yield record
            if len(records) < page:
                break
            after = records[-1].key.name
