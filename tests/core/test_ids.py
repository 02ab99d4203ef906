"""Message and request ids: random version-4 UUIDs, as SQS's are."""

from __future__ import annotations

import uuid

from hopper.core.ids import new_id


def test_ids_are_version_4_uuids_in_their_usual_text_form() -> None:
    for _ in range(1000):
        text = new_id()
        parsed = uuid.UUID(text)
        assert str(parsed) == text
        assert parsed.version == 4
        assert parsed.variant == uuid.RFC_4122


def test_ids_do_not_repeat() -> None:
    assert len({new_id() for _ in range(100_000)}) == 100_000
