"""The Celery workload: a real worker (`celery worker`, kombu's SQS transport) consumes
real tasks from hopper, and answers through a replies queue that this driver long-polls.

    python celery_client.py --endpoint URL --prefix NAME

Tasks: arguments in and out (add), a large unicode payload (echo), a task that fails and
is retried through the broker (flaky), and five tasks in order through a FIFO queue.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPLY_TIMEOUT = 90.0
STOP_TIMEOUT = 30.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--prefix", required=True)
    options = parser.parse_args()
    os.environ.update(COMPAT_ENDPOINT=options.endpoint, COMPAT_PREFIX=options.prefix)

    import boto3
    import celery
    import kombu
    from steps import announce, done, expect, step

    sqs = boto3.client("sqs", endpoint_url=options.endpoint, region_name="us-east-1",
                       aws_access_key_id="test", aws_secret_access_key="test")
    announce("celery", f"celery {celery.__version__} / kombu {kombu.__version__}",
             sqs.meta.service_model.protocol)
    with step("replies_queue"):
        replies = sqs.create_queue(QueueName=f"{options.prefix}-replies")["QueueUrl"]

    import celery_tasks as tasks

    with tempfile.TemporaryDirectory() as scratch:
        log = Path(scratch) / "worker.log"
        worker = _start_worker(log)
        try:
            with step("send_tasks"):
                tasks.add.delay(2, 3)
                tasks.echo.delay("ünïcödé " + "x" * 100_000)
                tasks.flaky.delay("again")
                for number in range(5):
                    tasks.ordered.apply_async((number,), queue="orders.fifo")
            with step("worker_consumes"):
                got = _replies(sqs, replies, 8, worker)
                by_task = {}
                for answer in got:
                    by_task.setdefault(answer["task"], []).append(answer)
                expect([a["value"] for a in by_task.get("add", [])] == [5], f"add: {got}")
                echoed = by_task.get("echo", [{}])[0].get("value", "")
                expect(echoed == "ünïcödé " + "x" * 100_000, "echo came back unchanged")
                flaky = by_task.get("flaky", [{}])[0]
                expect(flaky.get("retries") == 1, f"flaky ran after one retry: {flaky}")
                runs = sorted(by_task.get("ordered", []), key=lambda a: a["at"])
                order = [a["value"] for a in runs]
                expect(order == list(range(5)), f"the FIFO queue's tasks ran as {order}")
            with step("worker_stops"):
                worker.send_signal(signal.SIGTERM)
                code = worker.wait(STOP_TIMEOUT)
                expect(code == 0, f"the worker exited with {code}")
            with step("queues_drained"):
                for name in ("tasks", "orders.fifo"):
                    url = sqs.get_queue_url(QueueName=f"{options.prefix}-{name}")["QueueUrl"]
                    counts = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=[
                        "ApproximateNumberOfMessages",
                        "ApproximateNumberOfMessagesNotVisible"])["Attributes"]
                    expect(set(counts.values()) == {"0"}, f"{name} still holds {counts}")
        finally:
            if worker.poll() is None:
                worker.kill()
                worker.wait(STOP_TIMEOUT)
            print(f"--- worker log ---\n{log.read_text(errors='replace')[-6000:]}",
                  file=sys.stderr)
    done()


def _start_worker(log: Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "celery", "-A", "celery_tasks", "worker",
               "--pool", "solo", "--loglevel", "INFO", "-Q", "tasks,orders.fifo",
               "--without-heartbeat", "--without-gossip", "--without-mingle"]
    with log.open("wb") as output:
        return subprocess.Popen(command, cwd=HERE, stdout=output, stderr=subprocess.STDOUT,
                                env={**os.environ, "PYTHONPATH": str(HERE)})


def _replies(sqs: Any, url: str, count: int, worker: subprocess.Popen[bytes]) -> list[dict]:
    """Long-poll the replies queue until `count` replies came (or the worker died)."""
    answers: list[dict] = []
    deadline = time.monotonic() + REPLY_TIMEOUT
    while len(answers) < count and time.monotonic() < deadline and worker.poll() is None:
        got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=5)
        for message in got.get("Messages", []):
            answers.append(json.loads(message["Body"]))
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    if len(answers) < count:
        raise RuntimeError(f"{len(answers)} of {count} replies (worker exit: {worker.poll()})")
    return answers


if __name__ == "__main__":
    main()
