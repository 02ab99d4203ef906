"""The FIFO claims' statements (store/postgres/fifo.py): a queue of few groups is
claimed by probing each group, one of many groups by walking it in send order, and a
walk that finds too few heads (most groups in flight) gives way to the probes; a turn of
receives on a queue walked claims in one statement, a group each. The contract suite holds
them to AWS's order; these tests see which statement ran."""

from __future__ import annotations

import asyncio
from typing import cast

import asyncpg

from hopper.core.model import Delivery, NewMessage, QueueConfig, QueueKey
from hopper.store.postgres import PostgresQueueStore
from hopper.store.postgres.fifo import (
    AFTER_SHORT_RUNS,
    AFTER_SHORT_WALK,
    PROBES,
    TURN,
    WALK,
    claim_statement,
    coming_back,
    probes_due,
    singles_due,
)

from .conftest import StoreOpener

QUEUE = QueueKey("000000000000", "claims.fifo")


class Recorded(dict[str, str]):
    """The store's statements, noting the FIFO claims it looks up, in order."""

    def __init__(self, sql: dict[str, str]) -> None:
        super().__init__(sql)
        self.claims: list[str] = []

    def __getitem__(self, name: str) -> str:
        if name in (PROBES, WALK, TURN):
            self.claims.append(name)
        return super().__getitem__(name)


def recorded(store: PostgresQueueStore) -> Recorded:
    store._sql = Recorded(store._sql)
    return store._sql


async def filled(store: PostgresQueueStore, groups: int, each: int) -> None:
    """QUEUE with `each` messages in each of `groups` groups, sent round the groups."""
    await store.create_queue(QUEUE, QueueConfig(fifo=True), {}, now=None)
    for number in range(each):
        batch = [
            NewMessage(id=f"g{g}/{number}", body=f"g{g}/{number}", group_id=f"g{g}",
                       deduplication_id=f"g{g}/{number}")
            for g in range(groups)
        ]
        for start in range(0, groups, 10):
            await store.send(QUEUE, batch[start:start + 10], now=None)


async def received(store: PostgresQueueStore, count: int = 10, **options: object) -> list[str]:
    deliveries: list[Delivery] = await store.receive(
        QUEUE, max_messages=count, visibility_timeout=600, now=None, **options  # type: ignore[arg-type]
    )
    return [d.message.body for d in deliveries]


async def test_a_short_queue_of_few_groups_is_walked_each_run_whole_in_turn(
    open_store: StoreOpener,
) -> None:
    # (the walk reaches the end of the queue: every head is found)
    async with open_store(listen=False) as store:
        await filled(store, 3, 2)
        claims = recorded(store)
        assert await received(store) == ["g0/0", "g0/1", "g1/0", "g1/1", "g2/0", "g2/1"]
        assert await received(store) == []
    assert set(claims.claims) == {WALK}


async def test_a_long_queue_of_few_groups_is_probed_once_a_walk_fell_short(
    open_store: StoreOpener,
) -> None:
    # 600 messages in 3 groups: the walk reads 512 of them for 3 fresh heads, fewer than
    # the receive asks for, and claims nothing; the probes claim, and go on claiming
    async with open_store(listen=False) as store:
        await filled(store, 3, 200)
        claims = recorded(store)
        assert await received(store) == [f"g0/{n}" for n in range(10)]
        assert claims.claims == [WALK, PROBES]
        assert await received(store) == [f"g1/{n}" for n in range(10)]
        assert await received(store) == [f"g2/{n}" for n in range(10)]
    assert claims.claims == [WALK, PROBES, PROBES, PROBES]


async def test_a_queue_of_many_groups_is_walked_once_its_first_claim_found_them(
    open_store: StoreOpener,
) -> None:
    async with open_store(listen=False) as store:
        await filled(store, 100, 3)
        claims = recorded(store)
        first = await received(store)
        second = await received(store)
        third = await received(store)
    assert first == ["g0/0", "g0/1", "g0/2", "g1/0", "g1/1", "g1/2", "g2/0", "g2/1", "g2/2",
                     "g3/0"]
    # g3 is in flight (its head is), so the walk passes over it
    assert second == ["g4/0", "g4/1", "g4/2", "g5/0", "g5/1", "g5/2", "g6/0", "g6/1", "g6/2",
                      "g7/0"]
    assert third[:3] == ["g8/0", "g8/1", "g8/2"]
    assert claims.claims == [WALK, WALK, WALK]


async def mostly_in_flight(store: PostgresQueueStore) -> Recorded:
    """QUEUE of 100 groups of 30 messages, the first 95 groups in flight, and the store
    walking it (the walk found a head at each receive of one message)."""
    await filled(store, 100, 30)
    for g in range(95):
        assert await received(store, 1) == [f"g{g}/0"]
    assert store._probes_due[QUEUE] == 0
    return recorded(store)


async def test_a_walk_that_falls_short_gives_way_to_the_probes(open_store: StoreOpener) -> None:
    async with open_store(listen=False) as store:
        claims = await mostly_in_flight(store)
        assert await received(store) == [f"g95/{n}" for n in range(10)]
        assert claims.claims == [WALK, PROBES]
        # 4 fresh heads left, fewer than a receive asks for: the queue stays probed
        assert await received(store) == [f"g96/{n}" for n in range(10)]
        assert claims.claims == [WALK, PROBES, PROBES]


async def test_receives_sharing_a_turn_whose_walks_fall_short_claim_in_a_turn_of_probes(
    open_store: StoreOpener,
) -> None:
    # (7 receives: a turn's walk finds a group for each, and 5 are free)
    async with open_store(listen=False) as store:
        claims = await mostly_in_flight(store)
        answers = await asyncio.gather(*(received(store) for _ in range(7)))
    assert sorted(answers) == [[], [], *([f"g{g}/{n}" for n in range(10)] for g in range(95, 100))]
    assert claims.claims[0] in (WALK, TURN)
    assert claims.claims[-1] == PROBES
    later = claims.claims[claims.claims.index(PROBES):]
    assert WALK not in later and TURN not in later


async def test_a_receive_with_an_attempt_id_whose_walk_falls_short_claims_by_probes(
    open_store: StoreOpener,
) -> None:
    # (a receive with an attempt id claims alone, not in a turn)
    async with open_store(listen=False) as store:
        claims = await mostly_in_flight(store)
        assert await received(store, attempt_id="a") == [f"g95/{n}" for n in range(10)]
        assert claims.claims == [WALK, PROBES]
        assert await received(store, attempt_id="a") == [f"g95/{n}" for n in range(10)]


def test_after_a_walk_falls_short_the_queue_is_probed_a_while_before_it_is_walked_again() -> None:
    def said(many_groups: bool) -> list[asyncpg.Record]:
        return cast(list[asyncpg.Record], [{"many_groups": many_groups}])

    assert probes_due(WALK, said(True), 0) == 0
    due = probes_due(WALK, said(False), 0)
    assert due == AFTER_SHORT_WALK > 1
    # probes that find many groups count down; few groups keep the queue probed
    assert probes_due(PROBES, said(True), due) == due - 1
    assert probes_due(PROBES, said(False), due) == due
    assert probes_due(PROBES, said(True), 1) == 0
    assert probes_due(PROBES, said(False), 0) == 1
    assert claim_statement(1) == PROBES
    assert claim_statement(0) == WALK
    assert claim_statement(0, 2) == TURN
    assert claim_statement(1, 2) == PROBES
    assert probes_due(TURN, said(False), 0) == AFTER_SHORT_WALK
    assert probes_due(TURN, said(True), 0) == 0


async def test_a_turn_of_receives_gives_each_group_to_one_receive_in_its_order(
    open_store: StoreOpener,
) -> None:
    # 60 groups of 25: rounds of 16 receives at once, each round's deliveries deleted
    # before the next; the turns claim in one statement (TURN)
    async with open_store(listen=False) as store:
        await filled(store, 60, 25)
        claims = recorded(store)
        seen: dict[str, list[int]] = {}
        while True:
            answers: list[list[Delivery]] = await asyncio.gather(*(
                store.receive(QUEUE, max_messages=10, visibility_timeout=600, now=None)
                for _ in range(16)
            ))
            if not any(answers):
                break
            holders: dict[str, int] = {}
            for place, answer in enumerate(answers):
                for d in answer:
                    group, number = d.message.body.split("/")
                    # one receive a group, its messages in order from where it stood
                    assert holders.setdefault(group, place) == place, (group, answers)
                    assert number == str(len(seen.setdefault(group, []))), (group, answers)
                    seen[group].append(int(number))
            await asyncio.gather(*(
                store.delete(QUEUE, [d.receipt for d in answer], refuse_expired=True, now=None)
                for answer in answers if answer
            ))
    assert seen == {f"g{g}": list(range(25)) for g in range(60)}
    assert TURN in claims.claims


async def test_a_turn_whose_groups_runs_are_short_leaves_the_next_turns_to_claim_one_by_one(
    open_store: StoreOpener,
) -> None:
    # 200 groups of one message: a turn's claim gives each receive one message, where
    # claims of their own take 10 groups each
    async with open_store(listen=False) as store:
        await filled(store, 200, 1)
        claims = recorded(store)
        first = await asyncio.gather(*(received(store) for _ in range(8)))
        assert TURN in claims.claims
        # (the first receive may have claimed alone, before the others gathered)
        assert sorted(map(len, first))[:7] == [1] * 7
        assert store._singles_due[QUEUE] == AFTER_SHORT_RUNS
        del claims.claims[:]
        second = await asyncio.gather(*(received(store) for _ in range(8)))
    assert [len(answer) for answer in second] == [10] * 8
    assert set(claims.claims) == {WALK}


def test_turns_claim_one_by_one_a_while_after_a_turn_of_short_runs() -> None:
    # the served receives got 1 + 1 of 20: short; 10 + 10 + nothing of 30: not
    assert singles_due(TURN, [1, 1, 0], [10, 10, 10], 0) == AFTER_SHORT_RUNS
    assert singles_due(TURN, [10, 10, 0], [10, 10, 10], 5) == 0
    assert singles_due(WALK, [10], [10], 5) == 4
    assert singles_due(PROBES, [0], [10], 0) == 0
    assert claim_statement(0, 2, 1) == WALK


def test_a_receive_that_got_messages_is_coming_back() -> None:
    assert coming_back([[]]) is False
    assert coming_back([[cast(Delivery, object())]]) is True
