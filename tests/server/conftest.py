"""A live hopper server (a real `python -m hopper serve` process) and a boto3 client for it."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import boto3
import pytest
from botocore.config import Config

from tests.jetstream.servers import one_node
from tests.postgres.databases import drop, dsn_for, empty_database

from .processes import start_hopper

# The live-server tests run once per store. Postgres gets an empty database of its own
# that the server migrates at start-up, under a schema other than the default, so the
# session also proves `--database-schema` end to end. JetStream runs on the session's
# own nats-server.
STORES = ["memory", "postgres", "jetstream"]
SERVER_SCHEMA = "hopper_live"


@contextmanager
def store_options(store: str) -> Iterator[list[str]]:
    """The `hopper serve` options that put the server on `store`."""
    if store == "memory":
        yield []
        return
    if store == "jetstream":
        # The session's node; the server's streams and buckets go with it at exit.
        yield ["--nats-url", one_node().url]
        return
    database = asyncio.run(empty_database())
    try:
        yield ["--database-url", dsn_for(database), "--database-schema", SERVER_SCHEMA]
    finally:
        asyncio.run(drop(database))


@pytest.fixture(scope="session", params=STORES)
def endpoint(request: pytest.FixtureRequest) -> Iterator[str]:
    """The URL of a hopper server on a free port (relaxed timing), on each store in
    turn, stopped with SIGTERM at the end of the session, which must exit 0."""
    with tempfile.TemporaryDirectory() as scratch, store_options(request.param) as options:
        server = start_hopper(*options, "--relaxed-timing", log=Path(scratch) / "hopper.log")
        try:
            yield server.url
        finally:
            code = server.stop()
        assert code == 0, f"hopper exited with {code}:\n{server.output()}"


def sqs_client(endpoint: str):
    """A boto3 SQS client (JSON protocol) pointed at the server at `endpoint`."""
    return boto3.client(
        "sqs",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
        config=Config(retries={"total_max_attempts": 1}),
    )


@pytest.fixture(scope="session")
def sqs(endpoint: str):
    """A boto3 SQS client (JSON protocol) pointed at the live server."""
    return sqs_client(endpoint)
