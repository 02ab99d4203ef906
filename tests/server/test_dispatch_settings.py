"""Hopper.Dispatch and Hopper.RetryPolicy as an operator sets them: declared in
`hopper serve --config`, validated as CreateQueue validates them, and under
`--auth sigv4` only targets on hosts the server allows (`--dispatch-allow`, loopback
by default), since a queue attribute that makes the server send requests is a
request-forgery risk on a shared server."""

from __future__ import annotations

import json
import time
from pathlib import Path

import boto3
import pytest
from botocore.exceptions import ClientError

from hopper.testing import HopperServer

from .handlers import running_function

pytestmark = pytest.mark.slow

ACCOUNT = "123456789012"


def client(server: HopperServer, key: str = "x", secret: str = "x"):
    return boto3.client(
        "sqs", endpoint_url=server.endpoint_url, region_name="us-east-1",
        aws_access_key_id=key, aws_secret_access_key=secret,
    )


def test_a_declared_queue_gets_its_retry_policy_and_dispatch_target(tmp_path: Path):
    with running_function() as function:
        config = tmp_path / "queues.toml"
        config.write_text(
            '[[queues]]\nname = "jobs"\n[queues.attributes]\n'
            '"Hopper.RetryPolicy" = { baseDelaySeconds = 1, maxDelaySeconds = 30 }\n'
            f'"Hopper.Dispatch" = {{ url = "{function.url}", batchSize = 5 }}\n'
        )
        with HopperServer(config=str(config)) as server:
            sqs = client(server)
            url = sqs.get_queue_url(QueueName="jobs")["QueueUrl"]
            names = ["Hopper.RetryPolicy", "Hopper.Dispatch"]
            shown = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"]
            assert json.loads(shown["Hopper.RetryPolicy"])["maxDelaySeconds"] == 30
            assert json.loads(shown["Hopper.Dispatch"])["batchSize"] == 5
            message_id = sqs.send_message(QueueUrl=url, MessageBody="ok")["MessageId"]
            deadline = time.monotonic() + 10
            while function.done(message_id) == 0:
                assert time.monotonic() < deadline
                time.sleep(0.05)


@pytest.mark.parametrize(
    ("allowed", "host", "refused"),
    [
        (None, "127.0.0.1", False),
        (None, "worker.internal", True),
        ("*.internal", "worker.internal", False),
        ("10.0.0.0/8", "10.1.2.3", False),
        ("10.0.0.0/8", "169.254.169.254", True),
    ],
)
def test_with_sigv4_a_dispatch_target_must_be_on_an_allowed_host(
    tmp_path: Path, allowed: str | None, host: str, refused: bool
):
    keys = tmp_path / "credentials.toml"
    keys.write_text(
        f'[[credentials]]\naccess_key = "AKID"\nsecret_key = "secret"\naccount_id = "{ACCOUNT}"\n'
    )
    extra = {} if allowed is None else {"dispatch_allow": allowed}
    with HopperServer(auth="sigv4", credentials_file=str(keys), **extra) as server:
        sqs = client(server, "AKID", "secret")
        target = json.dumps({"url": f"http://{host}:9000/", "paused": True})
        url = sqs.create_queue(QueueName="q")["QueueUrl"]
        try:
            sqs.set_queue_attributes(QueueUrl=url, Attributes={"Hopper.Dispatch": target})
        except ClientError as error:
            assert refused, error
            assert error.response["Error"]["Code"] == "InvalidAttributeValue"
            assert "--dispatch-allow" in error.response["Error"]["Message"]
        else:
            assert not refused
