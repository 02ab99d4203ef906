"""The dispatcher's HTTP/1.1 connection against a real server on loopback that answers
as scripted: lengths, chunks, a close, interim answers, a kept-alive connection the
server dropped, a timeout, a refusal."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import pytest

from hopper.dispatch.connections import AnswerError, Connection

Script = Callable[[bytes, int], bytes | None]  # (request, its number) -> raw answer


@asynccontextmanager
async def server(script: Script, *, close_after: bool = False) -> AsyncIterator[str]:
    """A server answering each request with `script`'s bytes (None: hang up);
    `close_after` closes the connection after each answer, as an idle timeout would."""
    count = 0
    requests: list[bytes] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal count
        try:
            await answer_each(reader, writer)
        except asyncio.IncompleteReadError:
            pass  # the client closed the connection
        finally:
            writer.close()

    async def answer_each(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal count
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
            request = head + await reader.readexactly(length)
            requests.append(request)
            count += 1
            answer = script(request, count)
            if answer is None:
                break
            writer.write(answer)
            await writer.drain()
            if close_after:
                break

    listening = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = listening.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/2015-03-31/functions/function/invocations?x=1"
    finally:
        listening.close()


async def test_a_post_reads_an_answer_of_known_length_and_keeps_the_connection() -> None:
    seen: list[bytes] = []

    def script(request: bytes, number: int) -> bytes:
        seen.append(request)
        return b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Amz-Function-Error: x\r\n\r\nok"

    async with server(script) as url:
        connection = Connection(url)
        for _ in range(2):
            status, headers, body = await connection.post(b"{}", {"a": "b"}, 5)
            assert (status, headers["x-amz-function-error"], body) == (200, "x", b"ok")
        writer = connection.writer
        assert writer is not None
        connection.close()
    assert seen[0].startswith(b"POST /2015-03-31/functions/function/invocations?x=1 HTTP/1.1")
    assert b"\r\na: b\r\n" in seen[0] and seen[0].endswith(b"\r\n\r\n{}")


async def test_a_chunked_answer_after_an_interim_one_is_read_whole() -> None:
    answer = (
        b"HTTP/1.1 100 Continue\r\n\r\n"
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nTrailer: t\r\n\r\n"
    )
    async with server(lambda request, number: answer) as url:
        connection = Connection(url)
        chunked = {"transfer-encoding": "chunked"}
        assert await connection.post(b"", {}, 5) == (200, chunked, b"hello world")
        connection.close()


async def test_an_answer_without_length_runs_to_the_close() -> None:
    async with server(lambda r, n: b"HTTP/1.1 500 Oops\r\n\r\nboom", close_after=True) as url:
        connection = Connection(url)
        status, _, body = await connection.post(b"", {}, 5)
        assert (status, body) == (500, b"boom")
        assert connection.writer is None


async def test_a_kept_alive_connection_the_target_closed_is_opened_anew() -> None:
    ok = b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n"
    async with server(lambda r, n: ok, close_after=True) as url:
        connection = Connection(url)
        assert (await connection.post(b"1", {}, 5))[0] == 204
        await asyncio.sleep(0.05)  # the server's close arrives
        assert (await connection.post(b"2", {}, 5))[0] == 204
        connection.close()


async def test_a_slow_target_times_out_and_a_closed_port_is_refused() -> None:
    async def never(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await asyncio.sleep(10)
        finally:
            writer.close()

    listening = await asyncio.start_server(never, "127.0.0.1", 0)
    port = listening.sockets[0].getsockname()[1]
    with pytest.raises(TimeoutError):
        await Connection(f"http://127.0.0.1:{port}/").post(b"", {}, 0.2)
    listening.close()
    await listening.wait_closed()
    with pytest.raises(OSError):
        await Connection(f"http://127.0.0.1:{port}/").post(b"", {}, 2)


async def test_an_answer_that_is_not_http_is_an_answer_error() -> None:
    async with server(lambda r, n: b"SSH-2.0-OpenSSH\r\n\r\n") as url:
        with pytest.raises(AnswerError):
            await Connection(url).post(b"", {}, 5)
