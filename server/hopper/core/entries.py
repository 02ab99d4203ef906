"""A batch's entries: each one decoded either to a value or to the error it fails with
alone. The valid ones are handled together in one call, and each answer goes back in
its entry's place; when every entry failed, the queue must still exist for the call to
answer (AWS answers NonExistentQueue before any entry's failure)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar, cast

T = TypeVar("T")
R = TypeVar("R")
E = TypeVar("E")


async def per_entry(
    entries: Sequence[T | E],
    kind: type[T],
    call: Callable[[list[T]], Awaitable[Sequence[R]]],
    queue_exists: Callable[[], Awaitable[object]],
) -> list[R | E]:
    """`call` with the entries of type `kind`, in order; the answer has its result for
    each of them and the other entries (their errors) as they were. With no entry of
    `kind`, `queue_exists()` is awaited instead (it raises QueueNotFound)."""
    valid = [entry for entry in entries if isinstance(entry, kind)]
    if not valid:
        await queue_exists()
        return [cast(E, entry) for entry in entries]
    results = iter(await call(valid))
    return [next(results) if isinstance(entry, kind) else cast(E, entry) for entry in entries]
