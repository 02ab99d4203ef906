"""The queries file's loader (store/postgres/schema.py): named statements, and fragments that
several statements share, so that a rule they all keep is written once."""

from __future__ import annotations

from importlib import resources

import pytest

from hopper.store.postgres.pool import STATEMENT_CACHE_LIMIT
from hopper.store.postgres.schema import named_blocks, queries

CLAIMS = (
    "receive_messages", "receive_fifo_messages", "receive_fifo_walk", "receive_fifo_turn",
    "receive_fair_messages",
)

TEXT = """-- preamble, no statement
-- fragment: opening
-- The fragment's documentation, up to the first empty line.

WITH q AS (SELECT 1 AS one),

-- name: first
-- what first does
-- include: opening
a AS (SELECT one FROM q)
SELECT * FROM a;

-- name: second
-- include: opening
b AS (SELECT one + 1 AS two FROM q)
SELECT * FROM b;
"""


def test_an_include_stands_for_its_fragment_without_the_fragments_documentation() -> None:
    blocks = named_blocks(TEXT)
    assert blocks == {
        "first": "-- what first does\nWITH q AS (SELECT 1 AS one),\n"
        "a AS (SELECT one FROM q)\nSELECT * FROM a;",
        "second": "WITH q AS (SELECT 1 AS one),\nb AS (SELECT one + 1 AS two FROM q)\n"
        "SELECT * FROM b;",
    }


def test_an_include_naming_no_fragment_is_refused_when_loading() -> None:
    with pytest.raises(KeyError, match="include: closing"):
        named_blocks(TEXT + "-- name: third\n-- include: closing\nSELECT 1;\n")


def test_a_fragment_may_include_a_fragment_above_it() -> None:
    text = TEXT + "-- fragment: wider\n-- include: opening\nw AS (SELECT 2),\n\n"
    text += "-- name: third\n-- include: wider\nSELECT * FROM w;\n"
    assert named_blocks(text)["third"] == (
        "WITH q AS (SELECT 1 AS one),\nw AS (SELECT 2),\nSELECT * FROM w;"
    )


def test_what_the_three_claims_share_is_written_once() -> None:
    # The claims differ only in how they pick: their queue, housekeeping, dead-letter
    # moves and deliveries are one text in the file, and the same in each claim.
    text = (resources.files("hopper.store.postgres") / "sql" / "queries.sql").read_text()
    sql = queries()
    for step in ("q AS (", "expired AS (", "poison AS (", "-- the deliveries: a fresh"):
        assert all(sql[claim].count(step) == 1 for claim in CLAIMS), step
    for step in ("expired AS (", "poison AS (", "-- the deliveries: a fresh"):
        assert text.count(step) == 1, step


def test_what_the_two_fifo_claims_share_is_written_once() -> None:
    # They differ only in how they find the groups' heads: the runs they read, lock and
    # claim are one text.
    text = (resources.files("hopper.store.postgres") / "sql" / "queries.sql").read_text()
    sql = queries()
    for step in ("first_run AS MATERIALIZED (", "other_runs AS (", "locked AS MATERIALIZED ("):
        assert text.count(step) == 1, step
        for claim in ("receive_fifo_messages", "receive_fifo_walk"):
            assert sql[claim].count(step) == 1, (claim, step)
    # The turn's claim walks as the walk does and locks as both do; it reads its runs
    # its own way (one group a receive).
    for step in ("walked AS MATERIALIZED (", "locked AS MATERIALIZED ("):
        assert text.count(step) == 1, step
        assert sql["receive_fifo_turn"].count(step) == 1, step
    assert sql["receive_fifo_walk"].count("walked AS MATERIALIZED (") == 1


def test_the_fifo_deduplication_claim_is_written_once() -> None:
    # Both FIFO sends take a message's deduplication window by one statement text: the
    # file holds it once, and each send includes it.
    text = (resources.files("hopper.store.postgres") / "sql" / "queries.sql").read_text()
    sql = queries()
    assert text.count("INSERT INTO fifo_dedup") == 1
    for send in ("send_messages", "send_fifo_messages"):
        assert sql[send].count("INSERT INTO fifo_dedup") == 1, send
        assert "claimed AS (" in sql[send], send


def test_every_statement_is_short_enough_for_the_pools_statement_cache() -> None:
    # asyncpg prepares a statement once per connection only up to a length: past it, each
    # execution is parsed and planned again (the FIFO claim, 5 times the database's CPU).
    assert STATEMENT_CACHE_LIMIT > 15 * 1024  # (asyncpg's default; the claim is near it)
    too_long = {name: len(sql) for name, sql in queries().items()
                if len(sql) > STATEMENT_CACHE_LIMIT}
    assert too_long == {}
