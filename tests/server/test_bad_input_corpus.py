"""The bad-input corpus (tests/server/bad_input.py) against a live server on each store:
thousands of malformed requests over both protocols, and not one 5xx, not one answer
that is not a well-formed SQS answer of its protocol. Afterwards the server still
serves, logged no traceback, and its memory stayed level."""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from .bad_input import DASHBOARD_QUERIES, Case, World, corpus, malformation
from .conftest import STORES, sqs_client, store_options
from .processes import HopperProcess, start_hopper

CONCURRENCY = 4
# Growth of the server's resident memory over the second half of the corpus, once the
# first half has warmed it up: the corpus stores little, so more means a leak.
MEMORY_GROWTH_LIMIT = 16 * 1024 * 1024


@pytest.fixture(scope="module", params=STORES)
def server(request: pytest.FixtureRequest) -> Iterator[HopperProcess]:
    with tempfile.TemporaryDirectory() as scratch, store_options(request.param) as options:
        process = start_hopper(*options, log=Path(scratch) / "hopper.log")
        try:
            yield process
        finally:
            code = process.stop()
        assert code == 0, f"hopper exited with {code}:\n{process.output()}"


def make_world(url: str) -> World:
    sqs = sqs_client(url)
    queue = sqs.create_queue(QueueName="corpus")["QueueUrl"]
    fifo = sqs.create_queue(
        QueueName="corpus.fifo", Attributes={"FifoQueue": "true"}
    )["QueueUrl"]
    dead = sqs.create_queue(QueueName="corpus-dlq")["QueueUrl"]
    dead_arn = sqs.get_queue_attributes(QueueUrl=dead, AttributeNames=["QueueArn"])[
        "Attributes"]["QueueArn"]
    source = sqs.create_queue(QueueName="corpus-src", Attributes={"RedrivePolicy": json.dumps(
        {"deadLetterTargetArn": dead_arn, "maxReceiveCount": 5}
    )})["QueueUrl"]
    source_arn = sqs.get_queue_attributes(QueueUrl=source, AttributeNames=["QueueArn"])[
        "Attributes"]["QueueArn"]
    sqs.send_message(QueueUrl=dead, MessageBody="dead")
    task = sqs.start_message_move_task(SourceArn=dead_arn, DestinationArn=source_arn)
    sqs.send_message(QueueUrl=queue, MessageBody="held")
    [message] = sqs.receive_message(QueueUrl=queue, VisibilityTimeout=600)["Messages"]
    return World(queue, fifo, dead_arn, source_arn, message["ReceiptHandle"], task["TaskHandle"])


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes


async def exchange(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str, case: Case
) -> Answer:
    """One request and its answer over a kept-alive connection. Plain HTTP/1.1 by
    hand: an HTTP client library costs the test several times the server's own time."""
    head = [f"{case.method} {case.path} HTTP/1.1", f"Host: {host}",
            f"Content-Length: {len(case.body)}"]
    head += [f"{name}: {value}" for name, value in case.headers.items()]
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + case.body)
    status_line, *lines = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
    headers = {}
    for line in lines:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return Answer(int(status_line.split()[1]), headers, body)


async def run(url: str, cases: list[Case]) -> list[str]:
    """Every case's problem (see bad_input.malformation), over CONCURRENCY connections."""
    address = urlsplit(url)
    queue = iter(cases)
    problems: list[str] = []

    async def worker() -> None:
        reader, writer = await asyncio.open_connection(address.hostname, address.port)
        try:
            for case in queue:
                answer = await exchange(reader, writer, address.netloc, case)
                if answer.headers.get("connection") == "close":
                    writer.close()
                    reader, writer = await asyncio.open_connection(address.hostname, address.port)
                content_type = answer.headers.get("content-type", "").split(";")[0]
                problem = malformation(
                    case, answer.status, content_type, answer.headers, answer.body
                )
                if problem is not None:
                    problems.append(f"{case.name}: {problem}: {answer.body[:200]!r}")
        finally:
            writer.close()

    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    return problems


def resident_bytes(process: HopperProcess) -> int:
    status = Path(f"/proc/{process.process.pid}/status").read_text()
    [line] = [line for line in status.splitlines() if line.startswith("VmRSS:")]
    return int(line.split()[1]) * 1024


def test_the_bad_input_corpus_gets_only_well_formed_sqs_errors(server):
    cases = corpus(make_world(server.url))
    assert len(cases) > 2_000
    half = len(cases) // 2
    started = time.monotonic()
    problems = asyncio.run(run(server.url, cases[:half]))
    warmed = resident_bytes(server)
    problems += asyncio.run(run(server.url, cases[half:]))
    elapsed = time.monotonic() - started
    grown = resident_bytes(server) - warmed

    assert problems == [], f"{len(problems)} of {len(cases)} answers:\n" + "\n".join(
        problems[:60]
    )
    assert httpx.get(f"{server.url}/health").status_code == 200
    assert "Traceback" not in server.output()
    assert grown < MEMORY_GROWTH_LIMIT, f"resident memory grew {grown} bytes"
    print(f"{len(cases)} cases in {elapsed:.1f}s, memory grew {grown} bytes")


def test_the_dashboard_answers_bad_query_parameters_with_a_client_error(server):
    for path in DASHBOARD_QUERIES:
        response = httpx.get(server.url + path)
        assert 400 <= response.status_code < 500, (path[:80], response.status_code)
        assert isinstance(response.json(), dict)
