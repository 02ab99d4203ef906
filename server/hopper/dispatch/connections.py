"""One kept-alive HTTP/1.1 connection to a dispatch target, owned by one worker.

A dispatcher's calls are all alike (a POST with a length, to one URL, one at a time
per worker), so a few dozen lines of HTTP/1.1 serve them at a fraction of a general
client's cost per call: the call is most of what dispatch costs hopper per batch.
Answers may come with a length, chunked, or up to the connection's close.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Mapping
from urllib.parse import urlsplit

# The largest answer read (Lambda's own response limit): a bigger one fails the call.
MAX_ANSWER_BYTES = 6 * 1024 * 1024
_MAX_HEADERS = 100


class AnswerError(Exception):
    """The target's answer was not HTTP/1.1 as a dispatcher reads it."""


class Connection:
    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.tls = parts.scheme == "https"
        self.host = parts.hostname or ""
        self.port = parts.port or (443 if self.tls else 80)
        self.path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self.authority = parts.netloc.rpartition("@")[2]
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(
        self, body: bytes, headers: Mapping[str, str], timeout: float
    ) -> tuple[int, dict[str, str], bytes]:
        """(status, headers with lower-case names, body) of a POST of `body`. Raises
        TimeoutError, OSError (refused, reset), AnswerError; the connection is then
        closed, and the next call opens another."""
        try:
            async with asyncio.timeout(timeout):
                return await self._exchange(body, headers)
        except BaseException:
            self.close()
            raise

    async def _exchange(
        self, body: bytes, headers: Mapping[str, str]
    ) -> tuple[int, dict[str, str], bytes]:
        request = self._request(body, headers)
        if self.writer is not None:
            try:
                return await self._round_trip(request)
            except (ConnectionError, asyncio.IncompleteReadError):
                # a kept-alive connection the target closed while idle: once more, anew
                self.close()
        await self._open()
        return await self._round_trip(request)

    async def _open(self) -> None:
        context = ssl.create_default_context() if self.tls else None
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port, ssl=context)

    def _request(self, body: bytes, headers: Mapping[str, str]) -> bytes:
        lines = [f"POST {self.path} HTTP/1.1", f"host: {self.authority}",
                 f"content-length: {len(body)}", "user-agent: hopper-dispatch"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body

    async def _round_trip(self, request: bytes) -> tuple[int, dict[str, str], bytes]:
        assert self.reader is not None and self.writer is not None
        self.writer.write(request)
        await self.writer.drain()
        status, headers = await self._head(self.reader)
        while 100 <= status < 200:  # an interim answer: the final one follows
            status, headers = await self._head(self.reader)
        content = await self._body(self.reader, headers)
        if headers.get("connection", "").lower() == "close":
            self.close()
        return status, headers, content

    @staticmethod
    async def _head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
        line = await reader.readline()
        if not line:
            raise ConnectionResetError("the target closed the connection")
        version, _, rest = line.decode("latin-1").partition(" ")
        code = rest[:3]
        if not version.startswith("HTTP/1.") or not code.isdigit():
            raise AnswerError(f"not an HTTP/1.1 answer: {line[:80]!r}")
        headers: dict[str, str] = {}
        for _ in range(_MAX_HEADERS):
            field = (await reader.readline()).decode("latin-1").strip()
            if not field:
                return int(code), headers
            name, _, value = field.partition(":")
            headers[name.strip().lower()] = value.strip()
        raise AnswerError("too many header fields")

    async def _body(self, reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
        if "chunked" in headers.get("transfer-encoding", "").lower():
            return await _chunked(reader)
        length = headers.get("content-length")
        if length is not None:
            if not length.isdigit() or int(length) > MAX_ANSWER_BYTES:
                raise AnswerError(f"an answer of {length[:20]} bytes")
            return await reader.readexactly(int(length))
        content = await reader.read(MAX_ANSWER_BYTES + 1)  # up to the close
        self.close()
        if len(content) > MAX_ANSWER_BYTES:
            raise AnswerError("an answer beyond 6 MiB")
        return content

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


async def _chunked(reader: asyncio.StreamReader) -> bytes:
    content = bytearray()
    while True:
        size_line = (await reader.readline()).split(b";")[0].strip()
        try:
            size = int(size_line, 16)
        except ValueError:
            raise AnswerError(f"a bad chunk size {size_line[:20]!r}") from None
        if size == 0:
            while (await reader.readline()).strip():  # trailer fields, to the blank line
                pass
            return bytes(content)
        if len(content) + size > MAX_ANSWER_BYTES:
            raise AnswerError("an answer beyond 6 MiB")
        content += await reader.readexactly(size)
        await reader.readexactly(2)  # the chunk's CRLF
