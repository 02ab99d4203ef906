"""What every workload shares: named steps, checks, and the MD5s SQS answers with.

Standard library only: workloads run in the clients' own virtualenvs. A workload prints
`client <name> <version> <protocol>` first, `ok <step> <seconds>` per step, and `done`
at the end; a failed step prints `FAIL <step>: <why>` and exits 1.
"""

from __future__ import annotations

import hashlib
import re
import struct
import sys
import time
import traceback
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

# The message attributes every workload sends: one of each transport type.
ATTRIBUTES: dict[str, dict[str, Any]] = {
    "colour": {"DataType": "String", "StringValue": "blue"},
    "count": {"DataType": "Number", "StringValue": "42"},
    "blob": {"DataType": "Binary", "BinaryValue": b"\x00\x01\xfe\xff"},
}


class CheckFailed(AssertionError):
    """A workload's expectation did not hold."""


def expect(condition: object, why: str) -> None:
    if not condition:
        raise CheckFailed(why)


def announce(client: str, version: str, protocol: str) -> None:
    print(f"client {client} {version} {protocol}", flush=True)


@contextmanager
def step(name: str) -> Iterator[None]:
    """Run one named step; on any exception print FAIL and exit 1."""
    started = time.monotonic()
    try:
        yield
    except Exception as failure:  # the workload's verdict, whatever went wrong
        traceback.print_exc(file=sys.stderr)
        print(f"FAIL {name}: {type(failure).__name__}: {failure}", flush=True)
        sys.exit(1)
    print(f"ok {name} {time.monotonic() - started:.2f}", flush=True)


def done() -> None:
    print("done", flush=True)


def snake(action: str) -> str:
    """boto3's method name for an SQS action: SendMessageBatch -> send_message_batch."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", action).lower()


def md5_of_body(body: str) -> str:
    return hashlib.md5(body.encode("utf-8")).hexdigest()


def md5_of_attributes(attributes: Mapping[str, Mapping[str, Any]]) -> str:
    """SQS's MD5OfMessageAttributes: names sorted; each name, type and value
    length-prefixed, with a transport byte (1 string, 2 binary) before the value."""
    digest = hashlib.md5()
    for name in sorted(attributes):
        value = attributes[name]
        data_type = str(value["DataType"])
        digest.update(_prefixed(name.encode("utf-8")) + _prefixed(data_type.encode("utf-8")))
        if "BinaryValue" in value:
            raw = value["BinaryValue"]
            digest.update(b"\x02" + _prefixed(raw if isinstance(raw, bytes) else raw.encode()))
        else:
            digest.update(b"\x01" + _prefixed(str(value["StringValue"]).encode("utf-8")))
    return digest.hexdigest()


def _prefixed(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data
