"""Receipts in the Postgres store: the facts its guarded statements return, read as
the core's receipt outcomes (core/outcomes.py states the rule)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import asyncpg

from hopper.core.errors import QueueNotFound
from hopper.core.model import QueueKey, Receipt, ReceiptOutcome, ReceiptResult
from hopper.core.outcomes import classify_receipt
from hopper.store.postgres.schema import Connectable

_MAX_BIGINT = 2**63 - 1
# The outcome of every receipt whose guarded write happened: one value for all of them
# (a delete of 160 receipts made 160 alike).
_DONE = ReceiptResult(ReceiptOutcome.OK)


async def outcomes_of(
    db: Connectable | asyncpg.Pool,
    sql: Mapping[str, str],
    key: QueueKey,
    receipts: Sequence[Receipt],
    rows: Sequence[asyncpg.Record],
    refuse_expired: bool,
) -> list[ReceiptResult]:
    """The outcome of each receipt from the rows of its guarded statement (delete or
    change_visibility), with a fresh look at the tokens of messages that changed while
    it ran. Raises QueueNotFound."""
    if not receipts:
        if await db.fetchrow(sql["get_queue"], key.account, key.name) is None:
            raise QueueNotFound(key)
        return []
    if rows[0]["queue_id"] is None:
        raise QueueNotFound(key)
    results = [
        _DONE
        if row["done"]
        else classify(
            r.token,
            False,
            row["current_token"],
            row["lapsed"],
            refuse_expired,
            beyond=row.get("beyond", False),
        )
        for r, row in zip(receipts, rows, strict=True)
    ]
    pairs = list(zip(receipts, results, strict=True))
    raced = [r.message_id for r, result in pairs if result is None]
    tokens: dict[str, int] = {}
    if raced:
        current = await db.fetch(sql["current_tokens"], key.account, key.name, raced)
        tokens = {row["id"]: row["token"] for row in current}
    return [result or after_race(r.token, tokens.get(r.message_id)) for r, result in pairs]


def classify(
    presented: int,
    done: bool,
    current: int | None,
    lapsed: bool | None,
    refuse_expired: bool,
    *,
    beyond: bool = False,
) -> ReceiptResult | None:
    """The outcome of one receipt, from the statement's facts: whether the guarded write
    happened, and the message's token and lease as they were before it. None when the
    facts contradict each other (they say the write was due, yet it did not happen: the
    message changed while the statement ran): then `after_race` decides on a fresh look."""
    if done:
        return ReceiptResult(ReceiptOutcome.OK)
    result = classify_receipt(presented, current, lapsed, refuse_expired, beyond=beyond)
    return None if result.outcome is ReceiptOutcome.OK else result


def after_race(presented: int, current: int | None) -> ReceiptResult:
    """The outcome of a receipt whose message changed while its statement ran, from a
    fresh look at the message's token: a newer delivery supersedes it, else it is gone."""
    if current is not None and current > presented:
        return ReceiptResult(ReceiptOutcome.SUPERSEDED, current_token=current)
    return ReceiptResult(ReceiptOutcome.GONE)


def repeats_gone(receipts: Sequence[Receipt], results: list[ReceiptResult]) -> list[ReceiptResult]:
    """A message deleted by an earlier receipt of the same batch is gone for the later
    ones, as if the batch ran one receipt at a time."""
    deleted: set[str] = set()
    out = []
    for receipt, result in zip(receipts, results, strict=True):
        if result.outcome is ReceiptOutcome.OK and receipt.message_id in deleted:
            result = ReceiptResult(ReceiptOutcome.GONE)
        elif result.outcome is ReceiptOutcome.OK:
            deleted.add(receipt.message_id)
        out.append(result)
    return out


def tokens_text(receipts: Sequence[Receipt]) -> str:
    """The receipts' tokens (bounded) as delete_messages takes them: their text joined
    by ',', not an int8[] (asyncpg checks every element of an array parameter against
    abstract base classes: 0.36-0.42 us a token of hopper's CPU, against 0.20)."""
    return ",".join([str(bounded(r.token)) for r in receipts])


def bounded(token: int) -> int:
    """A token that fits bigint. Larger ones were never issued, and a clamped one is
    still larger than any issued token, so it still classifies as GONE."""
    return max(min(token, _MAX_BIGINT), -_MAX_BIGINT)
