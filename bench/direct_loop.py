"""`python -m bench.direct_loop`: CPU per SendMessage through hopper's HTTP protocol
(hopper/direct.py) in process, on the memory store, with no socket: the request's
bytes fed to the protocol, the answer taken from a stand-in transport. What it leaves
out is the kernel's part and the load generator, so it is steady on a loaded machine
where the benchmark's CPU per message swings by a tenth.

`--drain`: CPU per drained message instead, as the benchmark's drain: ReceiveMessage
(10) and a DeleteMessageBatch of what it got, over a queue filled beforehand; only the
protocol's part is counted, not the loop reading the receipts and writing the delete.

`--batch`: CPU per message sent in a SendMessageBatch of 10, as the benchmark's batch.

`--fixed` answers every call with a fixed body instead of running hopper's request
path: what is left is the HTTP side alone (the parser's callbacks, the checks, the
write). `--profile` prints cProfile's top functions for the last round.

    PYTHONPATH=server .venv/bin/python -m bench.direct_loop [--fixed] [--profile] [--drain|--batch]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import pstats
import time
from typing import Any

import uvicorn
import uvloop
from uvicorn.server import ServerState

from bench.client import AUTHORIZATION
from hopper import serving
from hopper.app import create_app
from hopper.direct import DirectProtocol
from hopper.settings import load
from hopper.wire.render_json import Rendered


class Transport:
    """What the protocol writes to."""

    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.closing = False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 50000), "sockname": ("127.0.0.1", 9324)}.get(name)

    def write(self, data: bytes) -> None:
        self.written.append(data)

    def close(self) -> None:
        self.closing = True

    def is_closing(self) -> bool:
        return self.closing

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


def request(action: str, payload: dict[str, Any]) -> bytes:
    """The request bench/client.py sends."""
    body = json.dumps(payload, separators=(",", ":")).encode()
    return (
        "POST / HTTP/1.1\r\nHost: 127.0.0.1:9324\r\n"
        "Content-Type: application/x-amz-json-1.0\r\n"
        f"Authorization: {AUTHORIZATION}\r\nX-Amz-Date: 20240101T000000Z\r\n"
        f"X-Amz-Target: AmazonSQS.{action}\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body


def fixed_answer(protocol: DirectProtocol) -> Any:
    """The protocol's `_answer` with a fixed answer in place of the endpoint's: the
    HTTP side alone."""

    async def answer(exchange: Any) -> None:
        protocol._write(exchange, Rendered(
            200, "application/x-amz-json-1.0", b'{"MessageId":"m"}', {"x": "r"}))

    return answer


async def measure(args: argparse.Namespace) -> None:
    app = serving.refusing_in_one_line(create_app(load({}, environ={})), lambda _: None)
    config = uvicorn.Config(app, http=DirectProtocol, lifespan="off", timeout_keep_alive=15)
    config.load()
    transport = Transport()
    protocol = DirectProtocol(config, ServerState(), {}, _loop=asyncio.get_running_loop())
    protocol.connection_made(transport)  # type: ignore[arg-type]

    spent = [0.0]  # CPU seconds inside `call`

    async def call(data: bytes) -> bytes:
        started = time.process_time()
        protocol.data_received(data)
        # One turn of the loop per request, as a server's reads take one each (an
        # answer run in a task is written in it); more only for a call that waits.
        await asyncio.sleep(0)
        while not transport.written:
            await asyncio.sleep(0)
        spent[0] += time.process_time() - started
        return transport.written.pop()

    created = await call(request("CreateQueue", {"QueueName": "loop"}))
    url = json.loads(created.partition(b"\r\n\r\n")[2])["QueueUrl"]
    send = request("SendMessage", {"QueueUrl": url, "MessageBody": "x" * 100})
    if args.fixed:
        protocol._answer = fixed_answer(protocol)  # type: ignore[method-assign]
    for _ in range(1000):  # warm: the queue's caches, the parser
        await call(send)
    if args.drain:
        what, per_call = "drained message", 10
        batch = request("SendMessageBatch", {"QueueUrl": url, "Entries": [
            {"Id": str(i), "MessageBody": "x" * 100} for i in range(10)]})
        for _ in range((args.fill or args.calls * args.rounds) // 10 + 100):
            await call(batch)
        receive = request("ReceiveMessage", {"QueueUrl": url, "MaxNumberOfMessages": 10})

        async def once() -> None:
            got = json.loads((await call(receive)).partition(b"\r\n\r\n")[2])["Messages"]
            await call(request("DeleteMessageBatch", {"QueueUrl": url, "Entries": [
                {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(got)]}))
    elif args.batch:
        what, per_call = "batched message", 10
        batch = request("SendMessageBatch", {"QueueUrl": url, "Entries": [
            {"Id": str(i), "MessageBody": "x" * 100} for i in range(10)]})

        async def once() -> None:
            await call(batch)
    else:
        what, per_call = "SendMessage", 1

        async def once() -> None:
            await call(send)
    calls = args.calls // per_call
    rounds = []
    for index in range(args.rounds):
        profile = cProfile.Profile() if args.profile and index == args.rounds - 1 else None
        if profile is not None:
            profile.enable()
        started, spent[0] = time.process_time(), 0.0
        for _ in range(calls):
            await once()
        # A drain counts the protocol's part only; a send the whole loop, as before.
        took = spent[0] if args.drain else time.process_time() - started
        rounds.append(took / (calls * per_call) * 1e6)
        if profile is not None:
            profile.disable()
            pstats.Stats(profile).sort_stats("tottime").print_stats(30)
    shown = " ".join(f"{us:.1f}" for us in rounds)
    print(f"CPU us per {what}, {args.rounds} rounds of {args.calls}: {shown}", end="")
    print(f"; best {min(rounds):.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fixed", action="store_true", help="a fixed answer: the HTTP side alone")
    parser.add_argument("--profile", action="store_true", help="cProfile the last round")
    parser.add_argument("--drain", action="store_true", help="receive 10 + delete, per message")
    parser.add_argument("--batch", action="store_true", help="SendMessageBatch of 10, per message")
    parser.add_argument("--calls", type=int, default=10_000, help="messages a round")
    parser.add_argument("--fill", type=int, help="--drain: messages sent first (default: all)")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if args.fixed and (args.drain or args.batch):
        parser.error("--fixed answers SendMessage only")
    if args.drain and args.batch:
        parser.error("--drain or --batch, not both")
    uvloop.run(measure(args))


if __name__ == "__main__":
    main()
