"""A PostgreSQL server of a test's own, in a temporary directory on a free port, that
the test may stop and start (`pg_ctl stop -m immediate`: the crash a restart under
load is). The session's shared server is never stopped: other test runs use it.

initdb and postgres refuse to run as root: as root, the cluster runs as the
`postgres` user, which owns its directory.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from dataclasses import dataclass

from tests.server.processes import free_port

START_TIMEOUT = 30  # seconds pg_ctl waits for the server to accept connections


def _binary(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if not found:
        raise RuntimeError(f"no PostgreSQL {name} under /usr/lib/postgresql")
    return found[-1]


def _as_owner(command: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return command
    return ["runuser", "-u", "postgres", "--", *command]


@dataclass
class Cluster:
    """One PostgreSQL server: its data directory and port."""

    directory: str
    port: int

    @property
    def dsn(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> None:
        options = (f"-p {self.port} -c listen_addresses=127.0.0.1"
                   f" -c unix_socket_directories={self.directory}")
        self._pg_ctl("start", "-w", "-t", str(START_TIMEOUT), "-o", options,
                     "-l", f"{self.directory}/server.log")

    def stop(self) -> None:
        """Stop at once, as a crash does: connections are cut, nothing is waited for."""
        self._pg_ctl("stop", "-m", "immediate", "-w")

    def remove(self) -> None:
        subprocess.run(_as_owner([_binary("pg_ctl"), "stop", "-D", self._data, "-m",
                                  "immediate"]), capture_output=True)  # may be stopped
        shutil.rmtree(self.directory, ignore_errors=True)

    @property
    def _data(self) -> str:
        return f"{self.directory}/data"

    def _pg_ctl(self, *arguments: str) -> None:
        done = subprocess.run(_as_owner([_binary("pg_ctl"), *arguments, "-D", self._data]),
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"pg_ctl {arguments[0]} failed: {done.stdout}{done.stderr}")


def new_cluster() -> Cluster:
    """An initialised, started cluster (trust authentication, user postgres)."""
    directory = tempfile.mkdtemp(prefix="hopper-pg-")
    if os.geteuid() == 0:
        owner = pwd.getpwnam("postgres")
        os.chown(directory, owner.pw_uid, owner.pw_gid)
    cluster = Cluster(directory, free_port())
    done = subprocess.run(
        _as_owner([_binary("initdb"), "-D", cluster._data, "-A", "trust", "-U", "postgres",
                   "--no-sync"]),
        capture_output=True, text=True,
    )
    if done.returncode != 0:
        shutil.rmtree(directory, ignore_errors=True)
        raise RuntimeError(f"initdb failed: {done.stdout}{done.stderr}")
    cluster.start()
    return cluster
