"""CPU time spent by a server under test: its process tree, read from /proc, and for
hopper on PostgreSQL the database backends serving it too.

Throughput moves with whatever else runs on a shared machine; the CPU a server spends
per message does not, so the benchmark reports it beside msg/s. Readings are
cumulative seconds: a workload reads before and after and divides the difference by
the messages it moved. (Linux only, as the benchmark is.)

The backends are found by application name: the benchmark starts hopper on Postgres
with `application_name` in its database URL (asyncpg passes it on), so its pool and
LISTEN connections say whose they are in pg_stat_activity. Postgres's own background
processes (WAL writer, checkpointer, autovacuum) serve every client and are not
counted.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

_TICK = os.sysconf("SC_CLK_TCK")

# (server process tree, its database backends), cumulative CPU seconds
CpuReading = Callable[[], Awaitable[tuple[float, float]]]


def process_seconds(pid: int) -> float:
    """User + system CPU seconds of one live process (all its threads); 0 once gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    # The command name may hold spaces and parentheses: fields count from its end.
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime


def tree(pid: int) -> list[int]:
    """`pid` and its live descendants."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # gone meanwhile
        parent = int(stat[stat.rindex(")") + 2 :].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, []))
    return found


class Meter:
    """Cumulative CPU seconds of a server's process tree and, given `database_url`
    and `application_name`, of the PostgreSQL backends with that name.

    A backend that ends between two readings takes its seconds with it; hopper's pool
    keeps its connections, so that loses nothing in practice."""

    def __init__(
        self,
        pid: int,
        database_url: str | None = None,
        application_name: str | None = None,
        backend_pids: Sequence[int] = (),
    ) -> None:
        self.pid = pid
        # Backends that are processes of their own (the JetStream targets' nats-servers).
        self._backend_pids = list(backend_pids)
        self._database_url = database_url
        self._application_name = application_name
        self._connection: object | None = None

    async def __call__(self) -> tuple[float, float]:
        """(the server's process tree, its database backends), in CPU seconds."""
        server = sum(process_seconds(pid) for pid in tree(self.pid))
        return server, await self.backend_seconds()

    async def backend_seconds(self) -> float:
        own = sum(process_seconds(pid) for pid in self._backend_pids)
        if self._database_url is None:
            return own
        import asyncpg

        if self._connection is None:
            self._connection = await asyncpg.connect(self._database_url)
        connection: asyncpg.Connection = self._connection  # type: ignore[assignment]
        pids = await connection.fetch(
            "SELECT pid FROM pg_stat_activity WHERE application_name = $1",
            self._application_name,
        )
        return own + sum(process_seconds(row["pid"]) for row in pids)

    async def close(self) -> None:
        if self._connection is not None:
            connection, self._connection = self._connection, None
            await connection.close()  # type: ignore[attr-defined]
