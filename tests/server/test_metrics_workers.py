"""Metrics with `--workers 2`: the counters are summed over the worker processes
(prometheus-client's multiprocess mode), so every scrape, whichever worker answers it,
reports what all of them counted."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from .conftest import sqs_client, store_options
from .processes import start_hopper
from .test_metrics import of_queue, scrape

SENDS = 20


def test_every_worker_reports_the_counters_of_all_workers(tmp_path: Path) -> None:
    with store_options("postgres") as options:
        server = start_hopper("--workers", "2", *options, log=tmp_path / "hopper.log")
        try:
            url = sqs_client(server.url).create_queue(QueueName="shared")["QueueUrl"]
            body = {"QueueUrl": url, "MessageBody": "hello"}
            for _ in range(SENDS):
                # A connection of its own each time, so the workers share the sends.
                response = httpx.post(
                    server.url, content=json.dumps(body),
                    headers={"x-amz-target": "AmazonSQS.SendMessage",
                             "content-type": "application/x-amz-json-1.0",
                             "connection": "close"},
                )
                assert response.status_code == 200, response.text
            for _ in range(10):
                samples = scrape(server.url)
                assert of_queue(samples, "hopper_messages_sent_total", "shared") == SENDS
                assert of_queue(samples, "hopper_queue_messages_visible", "shared") == SENDS
            # Deleted, the queue is gone from every worker's answer (issue 25, item 7),
            # though the workers' files still hold what they counted for it.
            sqs_client(server.url).delete_queue(QueueUrl=url)
            for _ in range(10):
                assert "shared" not in httpx.get(f"{server.url}/metrics").text
        finally:
            code = server.stop()
    assert code == 0, server.output()
