"""The SNS bad-input corpus (tests/server/sns_bad_input.py) against a live server on
each store: every SNS action malformed field by field, and not one 5xx, not one answer
that is not a well-formed SNS answer. Afterwards the server still serves and logged no
traceback."""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

import httpx
import pytest

from .bad_input import Case
from .sns_bad_input import SnsWorld, corpus, malformation
from .sns_clients import queue_with_arn, sns_client, sqs_in
from .test_bad_input_corpus import CONCURRENCY, exchange, server  # noqa: F401 - the fixture

pytestmark = pytest.mark.slow


def make_world(url: str) -> SnsWorld:
    sns, sqs = sns_client(url), sqs_in(url)
    topic = sns.create_topic(Name="sns-corpus")["TopicArn"]
    fifo = sns.create_topic(Name="sns-corpus.fifo", Attributes={"FifoTopic": "true"})
    _, queue_arn = queue_with_arn(sqs, "sns-corpus")
    sub = sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=queue_arn)
    return SnsWorld(topic, fifo["TopicArn"], queue_arn, sub["SubscriptionArn"])


async def run(url: str, cases: list[Case]) -> list[str]:
    address = urlsplit(url)
    pending = iter(cases)
    problems: list[str] = []

    async def worker() -> None:
        reader, writer = await asyncio.open_connection(address.hostname, address.port)
        try:
            for case in pending:
                answer = await exchange(reader, writer, address.netloc, case)
                if answer.headers.get("connection") == "close":
                    writer.close()
                    reader, writer = await asyncio.open_connection(address.hostname,
                                                                   address.port)
                content_type = answer.headers.get("content-type", "").split(";")[0]
                problem = malformation(case, answer.status, content_type, answer.body)
                if problem is not None:
                    problems.append(f"{case.name}: {problem}: {answer.body[:200]!r}")
        finally:
            writer.close()

    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    return problems


def test_the_sns_corpus_gets_only_well_formed_sns_answers(server):  # noqa: F811
    cases = corpus(make_world(server.url))
    assert len(cases) > 1_000
    problems = asyncio.run(run(server.url, cases))
    assert problems == [], f"{len(problems)} of {len(cases)} answers:\n" + "\n".join(
        problems[:60])
    assert httpx.get(f"{server.url}/health").status_code == 200
    assert "Traceback" not in server.output()
