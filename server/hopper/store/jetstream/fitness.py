"""What hopper needs of a nats-server, checked once at connection: refused in one line
rather than found out by the first large message or the first backlog read."""

from __future__ import annotations

from typing import Any

# Batched direct gets (a backlog's head in one request) came with nats-server 2.11.
MIN_VERSION = (2, 11, 0)
# A 1 MiB message with its attributes, as JSON: a body of quotes or backslashes doubles
# when escaped, and binary attributes grow by a third in base64. 2 MiB and some room.
MIN_PAYLOAD = 2 * 1024 * 1024 + 64 * 1024


def _version(text: str) -> tuple[int, ...]:
    numbers = []
    for part in text.split("-")[0].split("."):
        numbers.append(int(part) if part.isdigit() else 0)
    return tuple(numbers)


def unfit(info: dict[str, Any]) -> str | None:
    """Why a server announcing `info` (its INFO message) cannot carry hopper's queues,
    or None when it can."""
    version = str(info.get("version", "0"))
    if _version(version) < MIN_VERSION:
        wanted = ".".join(map(str, MIN_VERSION))
        return f"nats-server {version} is too old: hopper needs {wanted} or later"
    if not info.get("jetstream"):
        return "JetStream is not enabled on the server (jetstream {} in its configuration)"
    payload = int(info.get("max_payload", 0))
    if payload < MIN_PAYLOAD:
        return (
            f"the server's max_payload is {payload} bytes: a 1 MiB SQS message needs"
            f" {MIN_PAYLOAD} or more (max_payload: 8MB in its configuration)"
        )
    return None
