"""boto3 SNS clients for the live-server SNS tests, and names no other test uses."""

from __future__ import annotations

import uuid

import boto3
from botocore.config import Config


def sns_client(endpoint: str, region: str = "us-east-1"):
    return boto3.client(
        "sns", endpoint_url=endpoint, region_name=region, aws_access_key_id="test",
        aws_secret_access_key="test", config=Config(retries={"total_max_attempts": 1}),
    )


def sqs_in(endpoint: str, region: str = "us-east-1"):
    return boto3.client(
        "sqs", endpoint_url=endpoint, region_name=region, aws_access_key_id="test",
        aws_secret_access_key="test", config=Config(retries={"total_max_attempts": 1}),
    )


def unique(stem: str) -> str:
    return f"{stem}-{uuid.uuid4().hex[:10]}"


def queue_with_arn(sqs, name: str, **attributes: str) -> tuple[str, str]:
    url = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])
    return url, arn["Attributes"]["QueueArn"]


def receive_all(sqs, url: str, count: int, **options) -> list[dict]:
    """Long-poll until `count` messages arrived (or a poll comes back empty)."""
    got: list[dict] = []
    while len(got) < count:
        batch = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=2,
                                    **options).get("Messages", [])
        if not batch:
            break
        got.extend(batch)
        for message in batch:
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    return got
