"""`hopper serve --receipts aws` (or HOPPER_RECEIPTS=aws) end to end, through boto3
(JSON) and the query protocol, on each store: superseded receipts answered as AWS
answers them. Strict mode, the default, is what the session's own server runs (see
test_round_trip.py and test_fifo.py for its refusals)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from hopper.settings import SettingsError, load

from .conftest import STORES, sqs_client, store_options
from .processes import start_hopper
from .query_client import QueryClient, path_of


@pytest.fixture(scope="module", params=STORES)
def aws_endpoint(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A hopper server in AWS receipt mode on each store."""
    log = tmp_path_factory.mktemp("aws-receipts") / "hopper.log"
    with store_options(request.param) as options:
        server = start_hopper(*options, "--relaxed-timing", "--receipts", "aws", log=log)
        try:
            yield server.url
        finally:
            code = server.stop()
        assert code == 0, f"hopper exited with {code}:\n{server.output()}"


def test_boto3_superseded_receipts_act_on_the_current_delivery(aws_endpoint):
    sqs = sqs_client(aws_endpoint)
    url = sqs.create_queue(QueueName=f"aws-{uuid.uuid4().hex[:8]}")["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="m")
    # Recorded on AWS: receive with VisibilityTimeout 0 gives R1, a second receive with
    # VisibilityTimeout 3 gives R2, ChangeMessageVisibility(R1, 0) makes the message
    # visible at once.
    names = {"MessageSystemAttributeNames": ["FencingToken"]}
    [r1] = sqs.receive_message(QueueUrl=url, VisibilityTimeout=0, **names)["Messages"]
    [r2] = sqs.receive_message(QueueUrl=url, VisibilityTimeout=3, **names)["Messages"]
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=r1["ReceiptHandle"],
                                  VisibilityTimeout=0)
    [r3] = sqs.receive_message(QueueUrl=url, VisibilityTimeout=60, **names)["Messages"]
    # The fencing token is issued in this mode too.
    tokens = [int(r["Attributes"]["FencingToken"]) for r in (r1, r2, r3)]
    assert tokens == sorted(set(tokens))
    # DeleteMessage with a superseded receipt succeeds and deletes.
    sqs.delete_message(QueueUrl=url, ReceiptHandle=r1["ReceiptHandle"])
    counts = sqs.get_queue_attributes(
        QueueUrl=url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    assert counts == {
        "ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "0",
    }


def test_query_protocol_superseded_receipts_act_on_the_current_delivery(aws_endpoint):
    with QueryClient(aws_endpoint) as query:
        created = query.call("CreateQueue", {"QueueName": f"aws-q-{uuid.uuid4().hex[:8]}"})
        path = path_of(created.result["QueueUrl"])
        query.call("SendMessage", {"MessageBody": "m"}, path=path)
        r1 = query.call("ReceiveMessage", {"VisibilityTimeout": "0"}, path=path)
        old = r1.result["Message"]["ReceiptHandle"]
        query.call("ReceiveMessage", {"VisibilityTimeout": "3"}, path=path)
        changed = query.call(
            "ChangeMessageVisibility", {"ReceiptHandle": old, "VisibilityTimeout": "0"},
            path=path,
        )
        assert changed.status == 200, changed.text
        again = query.call("ReceiveMessage", {"VisibilityTimeout": "60"}, path=path)
        assert again.result["Message"]["Body"] == "m"
        deleted = query.call("DeleteMessage", {"ReceiptHandle": old}, path=path)
        assert deleted.status == 200, deleted.text
        empty = query.call("ReceiveMessage", {"VisibilityTimeout": "0"}, path=path)
        assert empty.status == 200 and not (empty.result or {}).get("Message")


def test_boto3_a_superseded_fifo_receipt_is_expired_in_aws_mode(aws_endpoint):
    sqs = sqs_client(aws_endpoint)
    url = sqs.create_queue(
        QueueName=f"aws-{uuid.uuid4().hex[:8]}.fifo", Attributes={"FifoQueue": "true"}
    )["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="m", MessageGroupId="g",
                     MessageDeduplicationId="d")
    [old] = sqs.receive_message(QueueUrl=url, VisibilityTimeout=0)["Messages"]
    [new] = sqs.receive_message(QueueUrl=url, VisibilityTimeout=60)["Messages"]
    with pytest.raises(sqs.exceptions.ClientError) as caught:
        sqs.delete_message(QueueUrl=url, ReceiptHandle=old["ReceiptHandle"])
    error = caught.value.response["Error"]
    assert error["Code"] == "InvalidParameterValue"
    assert error["Message"].endswith("Reason: The receipt handle has expired.")
    sqs.delete_message(QueueUrl=url, ReceiptHandle=new["ReceiptHandle"])


def test_the_receipt_mode_comes_from_the_flag_or_the_environment() -> None:
    assert load(environ={}).receipts == "strict"
    assert load(environ={"HOPPER_RECEIPTS": "aws"}).receipts == "aws"
    assert load({"receipts": "strict"}, {"HOPPER_RECEIPTS": "aws"}).receipts == "strict"
    with pytest.raises(SettingsError):
        load(environ={"HOPPER_RECEIPTS": "lenient"})
