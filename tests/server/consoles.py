"""Live servers for the console's tests: without auth and with `--auth sigv4` (two
tenants), on the in-memory store and on PostgreSQL, plus small helpers."""

from __future__ import annotations

import json
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import boto3
import httpx
from botocore.config import Config

from .conftest import store_options
from .processes import start_hopper

API = "/dashboard/api"
# What the console's page sends with every API request (hopper refuses actions without).
CONSOLE_HEADERS = {"x-hopper-console": "1"}
TENANT_A = ("AKIDTENANTA", "secret-a", "111111111111")
TENANT_B = ("AKIDTENANTB", "secret-b", "222222222222")
CREDENTIALS = "".join(
    f'[[credentials]]\naccess_key = "{k}"\nsecret_key = "{s}"\naccount_id = "{a}"\n'
    for k, s, a in (TENANT_A, TENANT_B)
)


@dataclass(frozen=True)
class Server:
    url: str
    auth: bool

    def sqs(self, tenant: tuple[str, str, str] = TENANT_A, region: str = "us-east-1"):
        key, secret, _ = tenant
        return boto3.client(
            "sqs", endpoint_url=self.url, region_name=region,
            aws_access_key_id=key, aws_secret_access_key=secret,
            config=Config(retries={"total_max_attempts": 1}),
        )

    def sns(self, tenant: tuple[str, str, str] = TENANT_A, region: str = "us-east-1"):
        key, secret, _ = tenant
        return boto3.client(
            "sns", endpoint_url=self.url, region_name=region,
            aws_access_key_id=key, aws_secret_access_key=secret,
            config=Config(retries={"total_max_attempts": 1}),
        )

    def account(self, tenant: tuple[str, str, str] = TENANT_A) -> str:
        return tenant[2] if self.auth else "000000000000"

    def api(self, tenant: tuple[str, str, str] | None = TENANT_A) -> httpx.Client:
        """An HTTP client of the console's API, signed in as `tenant` with auth on."""
        headers = dict(CONSOLE_HEADERS)
        if self.auth and tenant is not None:
            answer = httpx.post(
                f"{self.url}{API}/session", headers=CONSOLE_HEADERS,
                json={"access_key": tenant[0], "secret_key": tenant[1]},
            )
            answer.raise_for_status()
            headers["authorization"] = f"Bearer {answer.json()['token']}"
        return httpx.Client(base_url=f"{self.url}{API}", headers=headers)


@contextmanager
def console_server(store: str, auth: bool) -> Iterator[Server]:
    with tempfile.TemporaryDirectory() as scratch, store_options(store) as options:
        extra = ["--relaxed-timing"]
        if auth:
            keys = Path(scratch) / "credentials.toml"
            keys.write_text(CREDENTIALS)
            extra += ["--auth", "sigv4", "--credentials-file", str(keys)]
        server = start_hopper(*options, *extra, log=Path(scratch) / "hopper.log")
        try:
            yield Server(server.url, auth)
        finally:
            code = server.stop()
        assert code == 0, f"hopper exited with {code}:\n{server.output()}"


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def dead_letter_pair(sqs, dead: int = 1, body: str = "poison") -> tuple[str, str, str, str]:
    """(source name, source URL, DLQ name, DLQ URL), the DLQ holding `dead` messages."""
    dlq_name, source_name = unique("dlq"), unique("src")
    dlq = sqs.create_queue(QueueName=dlq_name)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]
    policy = {"deadLetterTargetArn": arn["QueueArn"], "maxReceiveCount": "1"}
    source = sqs.create_queue(
        QueueName=source_name, Attributes={"RedrivePolicy": json.dumps(policy)}
    )["QueueUrl"]
    for n in range(dead):
        sqs.send_message(QueueUrl=source, MessageBody=body if n == 0 else f"{body} {n}")
    while len(sqs.receive_message(QueueUrl=source, MaxNumberOfMessages=10, VisibilityTimeout=0)
              .get("Messages", [])):
        pass  # each second receive moves what the first delivered
    return source_name, source, dlq_name, dlq


def depth(sqs, url: str) -> int:
    names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible",
             "ApproximateNumberOfMessagesDelayed"]
    values = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"]
    return sum(int(values[name]) for name in names)
