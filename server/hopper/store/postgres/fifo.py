"""Which statement claims a FIFO queue's messages, and a turn's claims in one round trip.

Two claims (queries.sql), the same but for how they find the groups' heads:
receive_fifo_messages probes each group of the queue, right for any queue and cheap for
few groups; receive_fifo_walk walks the queue in send order, cheap for many groups while
their heads are near its front. One statement with both ways was a plan of 131 nodes,
each started at every execution (a third of the claim's database CPU). The store keeps,
per queue, what the queue's last claim said (`many_groups`) and claims the next with the
walk when it said many, and a queue it has not claimed yet with the walk (probing every
group of a queue of 1,000 groups cost each claim of the first turn 10 ms). A walk that
finds too few heads (few groups, or most groups in flight, with backlogs at the front)
claims nothing and says so; the receive then claims with the probes, and so do the
queue's next AFTER_SHORT_WALK claims at least: a queue whose first messages stay those
of groups in flight would otherwise pay a walk that falls short (up to 512 probes) at
every other claim.

A turn of several receives on a queue to walk claims in one execution of
receive_fifo_turn, each receive a served group's run, instead of one execution each: a
claim's executor start-up (every node and InitPlan of its plan) was nearly half of it,
paid again by each receive of the turn.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import asyncpg

from hopper.core.model import Delivery, QueueKey

# A FIFO receive sweeps its queue's expired deduplication ids once in this many.
DEDUP_SWEEP_EVERY = 64

PROBES = "receive_fifo_messages"
WALK = "receive_fifo_walk"
TURN = "receive_fifo_turn"


# After a walk fell short, the queue's claims probe this many times before one walks.
AFTER_SHORT_WALK = 64

# After a turn's claim (TURN) gave its receives that got a group less than half of what
# they asked for (the groups' runs are shorter than the receives' limits: one message a
# group, say, where a claim of its own would go on to further groups), the queue's next
# this many turns claim receive by receive.
AFTER_SHORT_RUNS = 64


def claim_statement(probes_due: int, receives: int = 1, singles_due: int = 0) -> str:
    """The claim for `receives` receives of a queue whose claims are to probe
    `probes_due` more times, and whose turns are to claim receive by receive
    `singles_due` more times."""
    if probes_due > 0:
        return PROBES
    return TURN if receives > 1 and singles_due == 0 else WALK


def singles_due(statement: str, got: Sequence[int], limits: Sequence[int], due: int) -> int:
    """How many turns of a queue claim receive by receive, after a turn by `statement`
    whose receives got `got` messages of their `limits`, `due` before it: AFTER_SHORT_RUNS
    after a TURN whose served receives got less than half of what they asked for, none
    after one that did not; one fewer after any other turn."""
    if statement != TURN:
        return max(due - 1, 0)
    asked = sum(limit for count, limit in zip(got, limits, strict=True) if count > 0)
    return AFTER_SHORT_RUNS if 2 * sum(got) < asked else 0


def probes_due(statement: str, rows: Sequence[asyncpg.Record], due: int) -> int:
    """How many claims of a queue probe before one walks, after a claim by `statement`
    that returned `rows` (its `many_groups`), `due` before it. A walk that found its
    heads walks again; probes that found few groups probe again; probes that found many
    count down what a walk that fell short left due."""
    if statement in (WALK, TURN):
        return 0 if rows[0]["many_groups"] else AFTER_SHORT_WALK
    if not rows[0]["many_groups"]:
        return max(due, 1)
    return max(due - 1, 0)


def fell_short(statement: str, rows: Sequence[asyncpg.Record]) -> bool:
    """Whether a claim by `statement` is a walk that found too few heads: it claimed
    nothing, and the receive claims again with PROBES."""
    return statement in (WALK, TURN) and not rows[0]["many_groups"]


def turn_arguments(
    statement: str,
    key: QueueKey,
    now: float | None,
    lease: float,
    limits: Sequence[int],
    lock: int,
) -> list[tuple[object, ...]]:
    """A turn's statements (pool.fetched_together): a first that claims nothing and
    takes the queue's receive lock, then a claim of each limit, each with its place, or
    (TURN) one claim of them all."""
    if statement == TURN:
        return [
            (key.account, key.name, now, 0, lease, [], [], lock),
            (key.account, key.name, now, len(limits), lease, [], list(limits), None),
        ]
    return [
        (key.account, key.name, now, 0, lease, [], 0, lock),
        *(
            (key.account, key.name, now, limit, lease, [], place, None)
            for place, limit in enumerate(limits, 1)
        ),
    ]


def turn(
    probes_due: int,
    singles_due: int,
    key: QueueKey,
    now: float | None,
    lease: float,
    limits: Sequence[int],
    lock: int,
) -> tuple[str, list[tuple[object, ...]]]:
    """A turn's claim statement (claim_statement) and its arguments (turn_arguments)."""
    statement = claim_statement(probes_due, len(limits), singles_due)
    return statement, turn_arguments(statement, key, now, lease, limits, lock)


def turn_claims(rows: Sequence[asyncpg.Record], receives: int) -> list[list[asyncpg.Record]]:
    """The rows of a turn's claims, one list a receive, from the turn's rows (each says
    its place in the turn; the lock's rows, place 0, say nothing the claims' do not)."""
    claims: list[list[asyncpg.Record]] = [[] for _ in range(receives + 1)]
    for row in rows:
        claims[row["turn_place"]].append(row)
    return claims[1:]


def sweep_due(receives: Counter[QueueKey], key: QueueKey) -> bool:
    """Whether a FIFO receive of `key` sweeps the queue's deduplication ids past their
    window, counting it in `receives`: the first receive of the queue here and every
    DEDUP_SWEEP_EVERY-th after it. Swept at every receive, it was one round trip in
    five; an expired id waits as a row the next send of that id reuses, so a sweep some
    receives later costs nothing but a few rows."""
    count = receives[key]
    receives[key] = count + 1
    return count % DEDUP_SWEEP_EVERY == 0


def coming_back(answers: list[list[Delivery]]) -> bool:
    """Whether a receive of a turn is coming back soon (the turns' `regather`,
    coalesce.py): one that got messages deletes them and receives again, so the next
    turn waits a moment for it (for sixteen receivers, one turn of sixteen instead of
    turns of the few that came back first, each paying the lock's statement and the
    claim's start-up); one that got none waits in its long poll."""
    return any(answers)
