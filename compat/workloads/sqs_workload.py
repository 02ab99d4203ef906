"""The compat workload, written once against `call(Action, **params) -> response`.

Each Python client adapts its own API to `call` (boto3 and old botocore directly,
aiobotocore through its event loop, the AWS CLI through `aws sqs ...`), so every client
drives the same requests: create a queue, send with attributes, long-poll receive,
change visibility, delete, batches, a dead letter and its redrive, a FIFO round trip.
Parameters and answers are boto3's shapes (bytes for binary values).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from steps import ATTRIBUTES, expect, md5_of_attributes, md5_of_body, step

Call = Callable[..., dict[str, Any]]
BODY = "hopper compat ✓"


def run(call: Call, prefix: str, *, system_names: str = "MessageSystemAttributeNames",
        attributes: dict[str, dict[str, Any]] | None = None) -> None:
    """All steps in order. `system_names` is the ReceiveMessage member that asks for
    system attributes (`AttributeNames` in clients older than 2024)."""
    attributes = attributes or ATTRIBUTES
    with step("create_queue"):
        url = call("CreateQueue", QueueName=f"{prefix}-jobs",
                   Attributes={"VisibilityTimeout": "30"})["QueueUrl"]
        expect(call("GetQueueUrl", QueueName=f"{prefix}-jobs")["QueueUrl"] == url, "GetQueueUrl")
        listed = call("ListQueues", QueueNamePrefix=prefix).get("QueueUrls", [])
        expect(url in listed, f"ListQueues gave {listed}")
    with step("send_with_attributes"):
        # delayed, so that the long poll below has to wait for it
        sent = call("SendMessage", QueueUrl=url, MessageBody=BODY, MessageAttributes=attributes,
                    DelaySeconds=1)
        expect(sent["MD5OfMessageBody"] == md5_of_body(BODY), "MD5OfMessageBody")
        expect(sent["MD5OfMessageAttributes"] == md5_of_attributes(attributes),
               "MD5OfMessageAttributes")
    with step("long_poll_receive"):
        started = time.monotonic()
        got = _one(call("ReceiveMessage", QueueUrl=url, WaitTimeSeconds=20,
                        MessageAttributeNames=["All"], **{system_names: ["All"]}))
        waited = time.monotonic() - started
        expect(0.3 < waited < 10, f"the long poll took {waited:.2f}s for a 1 s delay")
        expect(got["MessageId"] == sent["MessageId"], "the message received is the one sent")
        expect(got["Body"] == BODY and got["MD5OfBody"] == md5_of_body(BODY), "body and MD5")
        expect(got["MD5OfMessageAttributes"] == md5_of_attributes(attributes), "attribute MD5")
        expect(_plain(got["MessageAttributes"]) == _plain(attributes),
               f"attributes came back as {got['MessageAttributes']}")
        expect(got["Attributes"]["ApproximateReceiveCount"] == "1", "first receive")
    with step("change_visibility"):
        call("ChangeMessageVisibility", QueueUrl=url, ReceiptHandle=got["ReceiptHandle"],
             VisibilityTimeout=0)
        again = _one(call("ReceiveMessage", QueueUrl=url, WaitTimeSeconds=5,
                          **{system_names: ["ApproximateReceiveCount"]}))
        expect(again["MessageId"] == got["MessageId"], "released message received again")
        expect(again["Attributes"]["ApproximateReceiveCount"] == "2", "second receive")
    with step("delete"):
        call("DeleteMessage", QueueUrl=url, ReceiptHandle=again["ReceiptHandle"])
        counts = call("GetQueueAttributes", QueueUrl=url, AttributeNames=[
            "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"])
        expect(set(counts["Attributes"].values()) == {"0"}, f"left: {counts['Attributes']}")
    with step("batch"):
        _batch(call, url, attributes)
    with step("dead_letter"):
        dead, dead_arn, source, source_arn = _dead_letter_pair(call, prefix)
        moved = _dead_letter(call, source, dead, system_names)
        found = moved["Attributes"].get("DeadLetterQueueSourceArn", source_arn)
        expect(found == source_arn, f"DeadLetterQueueSourceArn {found}")
        sources = call("ListDeadLetterSourceQueues", QueueUrl=dead)["queueUrls"]
        expect(sources == [source], f"ListDeadLetterSourceQueues gave {sources}")
    with step("redrive"):
        task = call("StartMessageMoveTask", SourceArn=dead_arn)["TaskHandle"]
        back = _one(call("ReceiveMessage", QueueUrl=source, WaitTimeSeconds=10))
        expect(back["Body"] == "poison", "the dead letter is back in its source queue")
        call("DeleteMessage", QueueUrl=source, ReceiptHandle=back["ReceiptHandle"])
        tasks = call("ListMessageMoveTasks", SourceArn=dead_arn)["Results"]
        expect(tasks and tasks[0]["Status"] in ("RUNNING", "COMPLETED"), f"tasks: {tasks}")
        expect(tasks[0].get("TaskHandle", task) == task or tasks[0]["Status"] == "COMPLETED",
               "ListMessageMoveTasks names the task")
    with step("fifo"):
        _fifo(call, prefix, system_names)
    with step("delete_queues"):
        for queue in (url, source, dead):
            call("DeleteQueue", QueueUrl=queue)
        left = call("ListQueues", QueueNamePrefix=f"{prefix}-jobs").get("QueueUrls", [])
        expect(not left, f"still listed: {left}")


def _batch(call: Call, url: str, attributes: dict[str, dict[str, Any]]) -> None:
    entries: list[dict[str, Any]] = [{"Id": f"m{n}", "MessageBody": f"batch {n}"}
                                     for n in range(3)]
    entries.append({"Id": "attributed", "MessageBody": "batch a", "MessageAttributes": attributes})
    sent = call("SendMessageBatch", QueueUrl=url, Entries=entries)
    expect(not sent.get("Failed") and len(sent["Successful"]) == 4, f"sent: {sent}")
    for result in sent["Successful"]:
        entry = next(e for e in entries if e["Id"] == result["Id"])
        expect(result["MD5OfMessageBody"] == md5_of_body(entry["MessageBody"]), "batch MD5")
        if "MessageAttributes" in entry:
            expect(result["MD5OfMessageAttributes"] == md5_of_attributes(attributes), "attr MD5")
    received = _receive_all(call, url, 4)
    receipts = [{"Id": f"r{n}", "ReceiptHandle": m["ReceiptHandle"]}
                for n, m in enumerate(received)]
    changed = call("ChangeMessageVisibilityBatch", QueueUrl=url,
                   Entries=[dict(r, VisibilityTimeout=60) for r in receipts])
    expect(len(changed["Successful"]) == 4 and not changed.get("Failed"), f"changed: {changed}")
    deleted = call("DeleteMessageBatch", QueueUrl=url, Entries=receipts)
    expect(len(deleted["Successful"]) == 4 and not deleted.get("Failed"), f"deleted: {deleted}")


def _dead_letter_pair(call: Call, prefix: str) -> tuple[str, str, str, str]:
    dead = call("CreateQueue", QueueName=f"{prefix}-dead")["QueueUrl"]
    dead_arn = _arn(call, dead)
    policy = json.dumps({"deadLetterTargetArn": dead_arn, "maxReceiveCount": 1})
    source = call("CreateQueue", QueueName=f"{prefix}-work",
                  Attributes={"RedrivePolicy": policy})["QueueUrl"]
    return dead, dead_arn, source, _arn(call, source)


def _dead_letter(call: Call, source: str, dead: str, system_names: str) -> dict[str, Any]:
    """Send one message, receive it past maxReceiveCount; the copy in the dead-letter
    queue (left visible for the redrive)."""
    sent = call("SendMessage", QueueUrl=source, MessageBody="poison")
    _one(call("ReceiveMessage", QueueUrl=source, VisibilityTimeout=0, WaitTimeSeconds=5))
    none = call("ReceiveMessage", QueueUrl=source, WaitTimeSeconds=1).get("Messages", [])
    expect(not none, "a message past maxReceiveCount is not delivered again")
    moved = _one(call("ReceiveMessage", QueueUrl=dead, WaitTimeSeconds=5, VisibilityTimeout=0,
                      **{system_names: ["All"]}))
    expect(moved["MessageId"] == sent["MessageId"], "the dead letter keeps its id")
    return moved


def _fifo(call: Call, prefix: str, system_names: str) -> None:
    url = call("CreateQueue", QueueName=f"{prefix}-orders.fifo",
               Attributes={"FifoQueue": "true"})["QueueUrl"]
    sent = [call("SendMessage", QueueUrl=url, MessageBody=f"order {n}", MessageGroupId="g",
                 MessageDeduplicationId=f"d{n}") for n in range(3)]
    numbers = [int(s["SequenceNumber"]) for s in sent]
    expect(numbers == sorted(numbers) and len(set(numbers)) == 3, f"sequence {numbers}")
    duplicate = call("SendMessage", QueueUrl=url, MessageBody="order 0 again",
                     MessageGroupId="g", MessageDeduplicationId="d0")
    expect(duplicate["MessageId"] == sent[0]["MessageId"], "a duplicate send names the first")
    bodies = []
    for _ in range(6):
        answer = call("ReceiveMessage", QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=2,
                      **{system_names: ["MessageGroupId", "SequenceNumber"]})
        for message in answer.get("Messages", []):
            expect(message["Attributes"]["MessageGroupId"] == "g", "MessageGroupId")
            bodies.append(message["Body"])
            call("DeleteMessage", QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
        if len(bodies) >= 3:
            break
    expect(bodies == ["order 0", "order 1", "order 2"], f"received in order {bodies}")
    rest = call("ReceiveMessage", QueueUrl=url, WaitTimeSeconds=1).get("Messages", [])
    expect(not rest, f"the duplicate was delivered: {rest}")
    call("DeleteQueue", QueueUrl=url)


def _arn(call: Call, url: str) -> str:
    return str(call("GetQueueAttributes", QueueUrl=url,
                    AttributeNames=["QueueArn"])["Attributes"]["QueueArn"])


def _one(answer: dict[str, Any]) -> dict[str, Any]:
    messages = answer.get("Messages", [])
    expect(len(messages) == 1, f"expected one message, got {len(messages)}")
    return dict(messages[0])


def _receive_all(call: Call, url: str, count: int) -> list[dict[str, Any]]:
    received: dict[str, dict[str, Any]] = {}
    for _ in range(10):
        answer = call("ReceiveMessage", QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=2)
        received.update({m["MessageId"]: m for m in answer.get("Messages", [])})
        if len(received) >= count:
            break
    expect(len(received) == count, f"received {len(received)} of {count}")
    return list(received.values())


def _plain(attributes: dict[str, dict[str, Any]]) -> dict[str, tuple[str, Any]]:
    """Attributes as (type, value), whatever extra members a client adds."""
    return {name: (value["DataType"], value.get("StringValue", value.get("BinaryValue")))
            for name, value in attributes.items()}
