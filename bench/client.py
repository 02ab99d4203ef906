"""A lean SQS JSON-protocol client: hand-built HTTP/1.1 requests on one kept-alive
socket, so the load generator costs far less CPU than any server it measures.

Neither hopper nor moto checks signatures, so the Authorization header is a fixed
dummy; moto still reads its credential scope to route the request to SQS.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

AUTHORIZATION = (
    "AWS4-HMAC-SHA256 Credential=bench/20240101/us-east-1/sqs/aws4_request, "
    "SignedHeaders=host;x-amz-date, Signature=0"
)


class RequestFailed(Exception):
    """The server answered with a non-200 status (the message holds status and body)."""


class Connection:
    """One kept-alive HTTP/1.1 connection to `host:port`; not safe for concurrent
    callers (each load-generating client owns one). Reconnects when the server closes."""

    def __init__(self, host: str, port: int) -> None:
        self._host, self._port = host, port
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._head = (
            "POST / HTTP/1.1\r\n"
            f"Host: {host}:{port}\r\n"
            "Content-Type: application/x-amz-json-1.0\r\n"
            f"Authorization: {AUTHORIZATION}\r\n"
            "X-Amz-Date: 20240101T000000Z\r\n"
            "X-Amz-Target: AmazonSQS."
        ).encode()

    async def call(self, action: str, payload: dict[str, Any]) -> dict[str, Any]:
        """The decoded JSON answer to `action`; raises RequestFailed on a non-200."""
        body = json.dumps(payload, separators=(",", ":")).encode()
        request = b"%s%s\r\nContent-Length: %d\r\n\r\n%s" % (
            self._head,
            action.encode(),
            len(body),
            body,
        )
        status, answer = await self._exchange(request)
        if status != 200:
            raise RequestFailed(f"{action}: HTTP {status}: {answer[:300]!r}")
        return json.loads(answer) if answer else {}

    async def _exchange(self, request: bytes) -> tuple[int, bytes]:
        if self._writer is None:
            self._reader, self._writer = await asyncio.open_connection(self._host, self._port)
        assert self._reader is not None
        self._writer.write(request)
        head = await self._reader.readuntil(b"\r\n\r\n")
        status, length, closes = _parse_head(head)
        answer = await self._reader.readexactly(length)
        if closes:
            await self.close()
        return status, answer

    async def close(self) -> None:
        if self._writer is not None:
            writer, self._writer, self._reader = self._writer, None, None
            writer.close()
            with contextlib.suppress(OSError):  # the peer may be gone; nothing to release
                await writer.wait_closed()


def _parse_head(head: bytes) -> tuple[int, int, bool]:
    """Status, Content-Length and whether the server will close, from a response head.
    Both servers measured here always send Content-Length (no chunked answers)."""
    lines = head.split(b"\r\n")
    version, status = lines[0].split(b" ", 2)[:2]
    length, closes = 0, version == b"HTTP/1.0"
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"content-length":
            length = int(value)
        elif name == b"connection":
            closes = value.strip().lower() == b"close"
        elif name == b"transfer-encoding":
            raise RequestFailed("chunked responses are not supported by the bench client")
    return int(status), length, closes
