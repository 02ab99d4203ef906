"""How many of hopper's source files one SendMessage and one ReceiveMessage run through.

    .venv/bin/python scripts/files_crossed.py [--database-url postgresql://...] [-v]

A real server (hopper.testing.HopperServer) in a thread of this process, with a profile
hook on that thread recording the hopper files whose code runs while a request is
answered. Each request is made five times after a warm-up, and a file counts when every
run entered it: background work (the depth sampler, the vacuum) that happens to fall
inside one run is left out. ARCHITECTURE.md ("How a request flows") cites the counts.
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any

import boto3

from hopper.testing import HopperServer

PACKAGE = str(Path(__file__).resolve().parent.parent / "server" / "hopper")
RUNS = 5

_recording: set[str] | None = None


def _hook(frame: FrameType, event: str, arg: Any) -> None:
    if _recording is not None and event == "call":
        name = frame.f_code.co_filename
        if name.startswith(PACKAGE):
            _recording.add(name[len(PACKAGE) + 1 :])


def crossed(call: Any) -> set[str]:
    """The hopper files every one of RUNS calls of `call` ran through."""
    global _recording
    call()  # warm-up: imports, statement preparation, first look-ups
    runs = []
    for _ in range(RUNS):
        _recording = set()
        call()
        runs.append(_recording)
        _recording = None
    return set.intersection(*runs)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database-url")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    threading.setprofile(_hook)  # the server's thread, started below
    with HopperServer(database_url=args.database_url) as server:
        sys.setprofile(None)
        sqs = boto3.client(
            "sqs", endpoint_url=server.endpoint_url, region_name="us-east-1",
            aws_access_key_id="x", aws_secret_access_key="x",
        )
        server.reset()
        url = sqs.create_queue(QueueName="crossed")["QueueUrl"]
        sent = crossed(lambda: sqs.send_message(QueueUrl=url, MessageBody="x"))
        received = crossed(
            lambda: sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=1, WaitTimeSeconds=0)
        )
        server.reset()
    for name, files in (("SendMessage", sent), ("ReceiveMessage", received)):
        print(f"{name}: {len(files)} files")
        if args.verbose:
            for file in sorted(files):
                print("   ", file)


if __name__ == "__main__":
    main()
