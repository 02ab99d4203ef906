"""Message and request ids: random version-4 UUIDs, as SQS's are."""

from __future__ import annotations

import os
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


def test_a_forked_child_makes_ids_of_its_own() -> None:
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # the child: its next id, to the parent
        os.write(write, new_id().encode())
        os._exit(0)
    os.close(write)
    os.waitpid(child, 0)
    theirs = os.read(read, 64).decode()
    os.close(read)
    ours = new_id()
    assert theirs[:24] != ours[:24]
    assert uuid.UUID(theirs).version == 4
