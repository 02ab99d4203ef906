"""HTTP/S notifications on PostgreSQL survive a restart: a delivery whose endpoint
failed, due again after the server stopped, is delivered by the next server over the
same database. Postgres-only: the outbox is the database's (on memory it dies with the
process; README, "SNS")."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest

from tests.server.http_subscribers import subscriber
from tests.server.sns_clients import sns_client

from .test_processes import in_thread, serving

pytestmark = pytest.mark.slow

RETRY = {"healthyRetryPolicy": {"numRetries": 3, "minDelayTarget": 3, "maxDelayTarget": 3}}


async def test_a_retry_due_after_a_restart_is_delivered_by_the_next_server(
    database: str, tmp_path: Path
) -> None:
    with subscriber() as web:
        with serving(database, tmp_path / "first.log") as first:
            sns = sns_client(first.url)
            topic = sns.create_topic(Name="outbox")["TopicArn"]
            sns.subscribe(TopicArn=topic, Protocol="http", Endpoint=web.url,
                          Attributes={"DeliveryPolicy": json.dumps(RETRY)})
            confirmation = await in_thread(web.next)
            urllib.request.urlopen(json.loads(confirmation.body)["SubscribeURL"]).read()
            web.statuses = [500]
            sns.publish(TopicArn=topic, Message="survives")
            failed = await in_thread(web.next)
        # The first server is gone before the retry was due (3 s after the failure).
        with serving(database, tmp_path / "second.log"):
            retried = await in_thread(web.next, 15.0)
    assert json.loads(failed.body)["Message"] == json.loads(retried.body)["Message"]
    assert retried.headers["x-amz-sns-message-id"] == failed.headers["x-amz-sns-message-id"]
    assert web.posts.empty()

