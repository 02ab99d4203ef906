"""The workload through boto3, unmodified: current boto3 speaks JSON, boto3/botocore
1.34.89 (the last release before SQS moved to JSON) the query protocol.

    python boto3_client.py --endpoint URL --prefix NAME --protocol json|query
"""

from __future__ import annotations

import argparse
from typing import Any

import boto3
import botocore
import sns_workload
import sqs_workload
from botocore.config import Config
from steps import announce, done, expect, snake, step


def main() -> None:
    options = _arguments()
    client = boto3.client(
        "sqs", endpoint_url=options.endpoint, region_name="us-east-1",
        aws_access_key_id="test", aws_secret_access_key="test",
        config=Config(retries={"total_max_attempts": 1}, read_timeout=40),
    )
    protocol = client.meta.service_model.protocol
    announce(options.client, f"boto3 {boto3.__version__} / botocore {botocore.__version__}",
             protocol)
    with step("protocol"):
        expect(protocol == options.protocol, f"botocore speaks {protocol}")

    def call(action: str, **params: Any) -> dict[str, Any]:
        return dict(getattr(client, snake(action))(**params))

    receive = client.meta.service_model.operation_model("ReceiveMessage").input_shape
    system_names = ("MessageSystemAttributeNames" if "MessageSystemAttributeNames"
                    in receive.members else "AttributeNames")
    sqs_workload.run(call, options.prefix, system_names=system_names)
    sns = boto3.client(
        "sns", endpoint_url=options.endpoint, region_name="us-east-1",
        aws_access_key_id="test", aws_secret_access_key="test",
        config=Config(retries={"total_max_attempts": 1}, read_timeout=40),
    )

    def sns_call(action: str, **params: Any) -> dict[str, Any]:
        return dict(getattr(sns, snake(action))(**params))

    sns_workload.run(sns_call, call, options.prefix)
    done()


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--protocol", required=True, choices=["json", "query"])
    parser.add_argument("--client", default="boto3")
    return parser.parse_args()


if __name__ == "__main__":
    main()
