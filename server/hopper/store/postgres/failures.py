"""What asyncpg's exceptions become: no asyncpg exception escapes the store.

`translated` turns each, around a statement, into the core's `QueueNotFound` or
`StoreUnavailable` (pool.py's `open_pool` turns a failed connection into
`DatabaseUnreachable`). A context manager of its own, not `contextlib.contextmanager`:
every send, claim and delete runs inside one, and a generator's context manager costs
five interpreted calls each time; this one runs compiled (pyproject.toml's
`[tool.hopper] compiled`).
"""

from __future__ import annotations

from types import TracebackType

import asyncpg

from hopper.core.errors import QueueNotFound, StoreUnavailable
from hopper.core.model import QueueKey

# InternalClientError: a connection the server cut while asyncpg was mid-statement (seen
# as "cannot switch to state 15; another operation is in progress" committing a
# transaction during a database outage) is as unavailable as a refused one.
DATABASE_ERRORS = (
    OSError,
    TimeoutError,
    asyncpg.PostgresError,
    asyncpg.InterfaceError,
    asyncpg.InternalClientError,
)


class Translation:
    """asyncpg's exceptions become the core's: a foreign-key failure means the queue
    (`key`) was deleted under us; anything else means the database is not doing its
    job. Any other exception passes as it is."""

    def __init__(self, key: QueueKey | None) -> None:
        self._key = key

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:  # (None: never swallows an exception)
        if error is None:
            return
        if isinstance(error, asyncpg.ForeignKeyViolationError):
            if self._key is None:
                raise StoreUnavailable(str(error)) from error
            raise QueueNotFound(self._key) from error
        if isinstance(error, DATABASE_ERRORS):
            raise StoreUnavailable(f"{type(error).__name__}: {error}") from error


def translated(key: QueueKey | None = None) -> Translation:
    """`with translated(key):` around a statement (see Translation)."""
    return Translation(key)
