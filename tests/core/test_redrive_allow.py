"""RedriveAllowPolicy's byQueue: which source queues an ARN names."""

from __future__ import annotations

import json

from hopper.core.model import QueueKey
from hopper.core.redrive_allow import permits


def by_queue(*arns: str) -> str:
    return json.dumps({"redrivePermission": "byQueue", "sourceQueueArns": list(arns)})


def test_an_arn_names_a_queue_of_another_region_only_with_that_region() -> None:
    away = QueueKey("000000000000:eu-central-1", "src")
    assert permits(by_queue("arn:aws:sqs:eu-central-1:000000000000:src"), away)
    assert not permits(by_queue("arn:aws:sqs:eu-west-1:000000000000:src"), away)
    assert not permits(by_queue("arn:aws:sqs:eu-central-1:111111111111:src"), away)


def test_an_arn_names_a_queue_of_the_servers_own_region_by_account_and_name() -> None:
    home = QueueKey("000000000000", "src")
    assert permits(by_queue("arn:aws:sqs:us-east-1:000000000000:src"), home)
    assert not permits(by_queue("arn:aws:sqs:us-east-1:000000000000:other"), home)
