"""`python -m compat`: every client's workload against one hopper, and a table.

    python -m compat                        # start hopper (memory store), run every client
    python -m compat --client awscli        # only some clients (repeatable)
    python -m compat --endpoint URL         # against a hopper already running

Exits 1 when a client fails (or cannot be installed), 0 otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Iterator

from compat.clients import CLIENTS, named
from compat.run import Result, run_client


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m compat", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--client", action="append", metavar="NAME",
                        help=f"one of {', '.join(c.name for c in CLIENTS)} (repeatable)")
    parser.add_argument("--endpoint", help="a running hopper (default: start one)")
    parser.add_argument("--verbose", action="store_true", help="print each workload's output")
    options = parser.parse_args(argv)
    clients = [named(n) for n in options.client] if options.client else list(CLIENTS)
    results = []
    with _endpoint(options.endpoint) as endpoint:
        for client in clients:
            result = run_client(client, endpoint)
            results.append(result)
            print(_line(result), flush=True)
            if options.verbose or not result.ok:
                print(result.explain() if not result.ok else result.output)
    print(_table(results))
    return 0 if all(r.ok for r in results) else 1


@contextlib.contextmanager
def _endpoint(given: str | None) -> Iterator[str]:
    if given:
        yield given.rstrip("/")
        return
    from conformance.servers import hopper_server

    with hopper_server("memory", relaxed=False) as url:
        yield url


def _line(result: Result) -> str:
    verdict = "ok" if result.ok else f"FAILED: {result.failure}"
    if result.gaps:
        verdict += f" (SDK gaps: {', '.join(result.gaps)})"
    return (f"{result.client}: {verdict} (install {result.setup_seconds:.1f}s, "
            f"run {result.run_seconds:.1f}s)")


def _table(results: list[Result]) -> str:
    rows = [("client", "version", "protocol", "result")] + [
        (r.client, r.version, r.protocol, "pass" if r.ok else "FAIL") for r in results]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = ["| " + " | ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) + " |"
             for row in rows]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


if __name__ == "__main__":
    started = time.monotonic()
    code = main()
    print(f"compat: {time.monotonic() - started:.0f}s", file=sys.stderr)
    sys.exit(code)
