"""`--rate-limit N`: a token bucket per caller (access key, or client address with auth
off) answered with SQS's RequestThrottled. The edge is pinned with a fake clock; the
live servers show the first N requests pass, the error in both protocols, and that one
caller's exhaustion leaves another's bucket alone."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from hopper.auth.gate import Gate
from hopper.auth.sigv4 import Arrival
from hopper.auth.throttle import RateLimiter
from hopper.wire.errors import SqsError

from .processes import start_hopper
from .query_client import QueryClient

RATE = 5
KEYS = [f"AKIDRATE{i}" for i in range(6)]
CREDENTIALS = "".join(
    f'[[credentials]]\naccess_key = "{key}"\nsecret_key = "s-{key}"\n'
    f'account_id = "33333333333{i}"\n'
    for i, key in enumerate(KEYS)
)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


# --- the bucket, at its edge -----------------------------------------------------------


def test_a_full_bucket_admits_exactly_rate_requests_at_once():
    clock = FakeClock()
    limiter = RateLimiter(RATE, clock=clock)
    for _ in range(RATE):
        limiter.take("caller")
    with pytest.raises(SqsError) as raised:
        limiter.take("caller")
    assert raised.value.name == "RequestThrottled"


def test_the_bucket_refills_one_token_per_one_over_rate_seconds():
    clock = FakeClock()
    limiter = RateLimiter(RATE, clock=clock)
    for _ in range(RATE):
        limiter.take("caller")
    clock.now += 1 / RATE - 1e-6  # just short of a whole token
    with pytest.raises(SqsError):
        limiter.take("caller")
    clock.now += 2e-6
    limiter.take("caller")
    with pytest.raises(SqsError):
        limiter.take("caller")


def test_a_bucket_never_holds_more_than_one_seconds_worth():
    clock = FakeClock()
    limiter = RateLimiter(RATE, clock=clock)
    clock.now += 3600
    for _ in range(RATE):
        limiter.take("caller")
    with pytest.raises(SqsError):
        limiter.take("caller")


def test_callers_have_buckets_of_their_own():
    limiter = RateLimiter(1, clock=FakeClock())
    limiter.take("a")
    limiter.take("b")
    with pytest.raises(SqsError):
        limiter.take("a")


def test_idle_buckets_are_forgotten():
    clock = FakeClock()
    limiter = RateLimiter(RATE, clock=clock)
    for caller in ("a", "b", "c"):
        limiter.take(caller)
    clock.now += 120
    limiter.take("d")
    assert limiter.callers() == 1


def test_without_auth_the_client_address_is_the_caller():
    gate = Gate("000000000000", limiter=RateLimiter(1, clock=FakeClock()))
    arrival = Arrival("POST", "/", "", [], b"")
    assert gate.admit(arrival, "10.0.0.1") == "000000000000"
    assert gate.admit(arrival, "10.0.0.2") == "000000000000"
    with pytest.raises(SqsError):
        gate.admit(arrival, "10.0.0.1")


def test_refused_requests_are_counted_per_client_address():
    gate = Gate("000000000000", keys={}, limiter=RateLimiter(RATE, clock=FakeClock()))
    unsigned = Arrival("POST", "/", "", [], b"")
    for _ in range(RATE):
        with pytest.raises(SqsError) as raised:
            gate.admit(unsigned, "10.0.0.1")
        assert raised.value.name == "MissingAuthenticationToken"
    with pytest.raises(SqsError) as raised:
        gate.admit(unsigned, "10.0.0.1")
    assert raised.value.name == "RequestThrottled"
    with pytest.raises(SqsError) as raised:
        gate.admit(unsigned, "10.0.0.2")
    assert raised.value.name == "MissingAuthenticationToken"


# --- live servers -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def limited_endpoint() -> Iterator[str]:
    """A memory-store server with auth on and --rate-limit RATE."""
    with tempfile.TemporaryDirectory() as scratch:
        keys = Path(scratch) / "credentials.toml"
        keys.write_text(CREDENTIALS)
        server = start_hopper(
            "--auth", "sigv4", "--credentials-file", str(keys), "--rate-limit", str(RATE),
            log=Path(scratch) / "hopper.log",
        )
        try:
            yield server.url
        finally:
            assert server.stop() == 0, server.output()


@pytest.fixture(scope="module")
def open_limited_endpoint() -> Iterator[str]:
    """A memory-store server with auth off and --rate-limit RATE (per client address)."""
    with tempfile.TemporaryDirectory() as scratch:
        server = start_hopper("--rate-limit", str(RATE), log=Path(scratch) / "hopper.log")
        try:
            yield server.url
        finally:
            assert server.stop() == 0, server.output()


def sqs_for(endpoint: str, key: str):
    return boto3.client(
        "sqs", endpoint_url=endpoint, region_name="us-east-1",
        aws_access_key_id=key, aws_secret_access_key=f"s-{key}",
        config=Config(retries={"total_max_attempts": 1}),
    )


def until_throttled(call) -> tuple[int, ClientError]:
    """Call until refused; returns how many calls passed and the refusal. The bucket
    refills while the calls run, so a few more than RATE may pass, never fewer."""
    for passed in range(RATE * 20):
        try:
            call()
        except ClientError as error:
            return passed, error
    pytest.fail("never throttled")


def test_a_caller_past_its_rate_gets_request_throttled(limited_endpoint):
    passed, error = until_throttled(sqs_for(limited_endpoint, KEYS[0]).list_queues)
    assert passed >= RATE
    assert error.response["Error"]["Code"] == "RequestThrottled"
    assert error.response["ResponseMetadata"]["HTTPStatusCode"] == 403


def test_one_throttled_access_key_leaves_the_others_alone(limited_endpoint):
    _, refused = until_throttled(sqs_for(limited_endpoint, KEYS[1]).list_queues)
    assert refused.response["Error"]["Code"] == "RequestThrottled"
    other = sqs_for(limited_endpoint, KEYS[2])
    statuses = [other.list_queues()["ResponseMetadata"]["HTTPStatusCode"] for _ in range(RATE)]
    assert statuses == [200] * RATE


def test_wrong_secret_requests_are_throttled_per_client_address(limited_endpoint):
    # given a caller with a known access key and the wrong secret
    forger = boto3.client(
        "sqs", endpoint_url=limited_endpoint, region_name="us-east-1",
        aws_access_key_id=KEYS[4], aws_secret_access_key="not-the-secret",
        config=Config(retries={"total_max_attempts": 1}),
    )
    # when it keeps trying, it is refused for its signature, then throttled
    codes = []
    for _ in range(RATE * 20):
        with pytest.raises(ClientError) as raised:
            forger.list_queues()
        codes.append(raised.value.response["Error"]["Code"])
    assert codes[:RATE] == ["SignatureDoesNotMatch"] * RATE
    assert "RequestThrottled" in codes
    # and a correctly signed caller from the same address is still served
    sqs_for(limited_endpoint, KEYS[5]).list_queues()


def test_request_throttled_in_the_query_protocol(limited_endpoint):
    with QueryClient(limited_endpoint, access_key=KEYS[3], secret_key=f"s-{KEYS[3]}") as query:
        answers = [query.call("ListQueues", {}) for _ in range(RATE * 20)]
    refused = [a for a in answers if a.status != 200]
    assert len(refused) > 0 and all(a.status == 200 for a in answers[:RATE])
    assert refused[0].status == 403
    assert refused[0].error is not None
    assert (refused[0].error["Type"], refused[0].error["Code"]) == ("Sender", "RequestThrottled")


def test_without_auth_the_limit_applies_per_client_address(open_limited_endpoint):
    passed, error = until_throttled(sqs_for(open_limited_endpoint, "anything").list_queues)
    assert passed >= RATE
    assert error.response["Error"]["Code"] == "RequestThrottled"
