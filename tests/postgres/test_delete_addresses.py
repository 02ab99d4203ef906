"""Deletes by the address their claim left (store/postgres/deletes.py; the
statement delete_messages). Store-only: the address is a PostgreSQL row's ctid, a hint
the other stores have no use for. Whatever the hint says, a receipt deletes exactly
the delivery it names: these tests give the delete hints that are wrong, stale or
missing, and expect the contract's outcomes."""

from __future__ import annotations

import asyncpg
import pytest

from hopper.core.model import (
    Delivery,
    NewMessage,
    QueueConfig,
    QueueKey,
    ReceiptOutcome,
    ReceiptResult,
    VisibilityChange,
)
from hopper.store.postgres import PostgresQueueStore, deletes

from .conftest import StoreOpener

ACCOUNT = "000000000000"
QUEUE = QueueKey(ACCOUNT, "q")
OK = ReceiptResult(ReceiptOutcome.OK)


async def filled(store: PostgresQueueStore, count: int) -> None:
    await store.create_queue(QUEUE, QueueConfig(), {}, now=None)
    await store.send(QUEUE, [NewMessage(id=f"m{n}", body="x") for n in range(count)], now=None)


async def receive(store: PostgresQueueStore, count: int) -> list[Delivery]:
    return await store.receive(QUEUE, max_messages=count, visibility_timeout=600, now=None)


async def delete(store: PostgresQueueStore, deliveries: list[Delivery]) -> list[ReceiptResult]:
    receipts = [d.receipt for d in deliveries]
    return await store.delete(QUEUE, receipts, refuse_expired=False, now=None)


async def left(database: str) -> set[str]:
    connection = await asyncpg.connect(database, server_settings={"search_path": "hopper"})
    try:
        return {row["id"] for row in await connection.fetch("SELECT id FROM messages")}
    finally:
        await connection.close()


async def test_a_receipt_whose_row_moved_since_its_claim_is_deleted(
    open_store: StoreOpener, database: str
) -> None:
    # A visibility change writes a new version of the row elsewhere: the address the
    # claim returned now holds a dead version, and the delete finds the row by key.
    async with open_store(listen=False) as store:
        await filled(store, 3)
        deliveries = await receive(store, 3)
        changes = [VisibilityChange(d.receipt, 300.0) for d in deliveries[:2]]
        assert await store.change_visibility(
            QUEUE, changes, refuse_expired=False, now=None
        ) == [OK, OK]
        assert await delete(store, deliveries) == [OK, OK, OK]
    assert await left(database) == set()


async def test_a_receipt_deleted_through_another_process_needs_no_address(
    open_store: StoreOpener, database: str
) -> None:
    async with open_store(listen=False) as one, open_store(listen=False) as other:
        await filled(one, 2)
        deliveries = await receive(one, 2)
        assert await delete(other, deliveries) == [OK, OK]
    assert await left(database) == set()


async def test_an_address_of_another_messages_row_deletes_neither_by_mistake(
    open_store: StoreOpener, database: str
) -> None:
    # A hint pointing at another message's row (as a reused slot would after VACUUM):
    # the delete checks message and token there, deletes nothing at that address, and
    # deletes the receipt's own message by key.
    async with open_store(listen=False) as store:
        await filled(store, 2)
        first, second = await receive(store, 2)
        kept = store.delete_hints.addresses
        kept[first.token] = kept[second.token]
        assert await delete(store, [first]) == [OK]
        assert await left(database) == {second.message.id}
        assert await delete(store, [second]) == [OK]
    assert await left(database) == set()


async def test_a_superseded_receipt_with_an_address_is_refused(
    open_store: StoreOpener,
) -> None:
    # The address of an older delivery: the row is the message's, the token is not.
    async with open_store(listen=False) as store:
        await filled(store, 1)
        [old] = await store.receive(QUEUE, max_messages=1, visibility_timeout=0.0, now=None)
        [new] = await receive(store, 1)
        kept = store.delete_hints.addresses
        kept[old.token] = kept[new.token]
        assert await delete(store, [old]) == [
            ReceiptResult(ReceiptOutcome.SUPERSEDED, current_token=new.token)
        ]
        assert await delete(store, [new]) == [OK]


async def test_addresses_kept_past_their_bound_are_dropped_and_deletes_still_delete(
    open_store: StoreOpener, database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(deletes, "ADDRESSES_KEPT", 4)
    async with open_store(listen=False) as store:
        await filled(store, 9)
        batches = [await receive(store, 3) for _ in range(3)]
        assert len(store.delete_hints.addresses) <= 4
        for batch in batches:
            assert await delete(store, batch) == [OK] * 3
    assert await left(database) == set()
