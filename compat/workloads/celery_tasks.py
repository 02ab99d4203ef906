"""The Celery app of the compat workload: kombu's SQS transport pointed at hopper.

Every task answers by sending a message to the replies queue, which the driver
(celery_client.py) long-polls: no result backend, and nothing but SQS in between.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import boto3
from celery import Celery

ENDPOINT = os.environ["COMPAT_ENDPOINT"]
PREFIX = os.environ["COMPAT_PREFIX"]
REPLIES = f"{PREFIX}-replies"

app = Celery("compat")
app.conf.update(
    broker_url=f"sqs://test:test@{ENDPOINT.split('://', 1)[1]}",
    broker_transport_options={
        "region": "us-east-1",
        "is_secure": False,
        "queue_name_prefix": f"{PREFIX}-",
        "visibility_timeout": 60,
        "wait_time_seconds": 5,
        "polling_interval": 0,
    },
    broker_connection_retry_on_startup=True,
    task_default_queue="tasks",
    task_acks_late=True,
    worker_prefetch_multiplier=1,
    worker_hijack_root_logger=False,
)


def reply(**fields: Any) -> None:
    sqs = boto3.client("sqs", endpoint_url=ENDPOINT, region_name="us-east-1",
                       aws_access_key_id="test", aws_secret_access_key="test")
    url = sqs.get_queue_url(QueueName=REPLIES)["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody=json.dumps(fields))


@app.task
def add(x: int, y: int) -> None:
    reply(task="add", value=x + y)


@app.task
def echo(text: str) -> None:
    reply(task="echo", value=text)


@app.task(bind=True, max_retries=3)
def flaky(self: Any, label: str) -> None:
    """Fails its first run: Celery re-publishes it through SQS for a retry."""
    if self.request.retries == 0:
        raise self.retry(countdown=1)
    reply(task="flaky", value=label, retries=self.request.retries)


@app.task
def ordered(number: int) -> None:
    # the solo worker runs one task at a time: its clock orders the runs
    reply(task="ordered", value=number, at=time.monotonic_ns())
