"""What a dispatcher POSTs and how it reads the answer: the Lambda SQS event, the raw
headers, and batchItemFailures as Lambda treats it (pure functions, no server)."""

from __future__ import annotations

import base64
import json

from hopper.core.model import Delivery, MessageAttribute, QueueKey, StoredMessage
from hopper.dispatch.payloads import failed_items, lambda_event, raw_headers
from hopper.wire.context import RequestContext
from hopper.wire.receipts import decode_receipt

KEY = QueueKey("123456789012", "jobs.fifo")
CTX = RequestContext(
    protocol="json", account="", region="eu-west-1", base_url="http://h", path_queue=None,
    trace_header=None, request_id="", home_region="eu-west-1",
)


def delivery(message_id: str = "m1", body: str = "hello") -> Delivery:
    stored = StoredMessage(
        id=message_id, body=body, trace_header=None, sent_at=1_700_000_000.5,
        attributes={
            "colour": MessageAttribute("String", string_value="blue"),
            "blob": MessageAttribute("Binary", binary_value=b"\x00\x01"),
        },
        group_id="g1", deduplication_id="d1", sequence_number=7,
    )
    return Delivery(stored, token=42, receive_count=2, first_received_at=1_700_000_001.0,
                    visible_at=1_700_000_031.0)


def test_lambda_event_has_the_fields_of_an_sqs_event_source_mapping() -> None:
    [record] = json.loads(lambda_event(CTX, KEY, [delivery()]))["Records"]
    assert record["messageId"] == "m1"
    assert decode_receipt(KEY, record["receiptHandle"]).token == 42
    assert record["body"] == "hello"
    assert record["attributes"]["ApproximateReceiveCount"] == "2"
    assert record["attributes"]["SentTimestamp"] == "1700000000500"
    assert record["attributes"]["MessageGroupId"] == "g1"
    assert "FencingToken" not in record["attributes"]
    assert record["messageAttributes"]["colour"] == {
        "stringValue": "blue", "stringListValues": [], "binaryListValues": [],
        "dataType": "String",
    }
    assert base64.b64decode(record["messageAttributes"]["blob"]["binaryValue"]) == b"\x00\x01"
    assert record["md5OfBody"] == "5d41402abc4b2a76b9719d911017c592"
    assert len(record["md5OfMessageAttributes"]) == 32
    assert record["eventSource"] == "aws:sqs"
    assert record["eventSourceARN"] == "arn:aws:sqs:eu-west-1:123456789012:jobs.fifo"
    assert record["awsRegion"] == "eu-west-1"


def test_raw_headers_carry_the_message_facts_and_header_safe_attributes() -> None:
    headers = raw_headers(CTX, KEY, delivery())
    assert headers["x-hopper-message-id"] == "m1"
    assert headers["x-hopper-receive-count"] == "2"
    assert headers["x-hopper-message-group-id"] == "g1"
    assert headers["x-hopper-attribute-colour"] == "blue"
    assert headers["x-hopper-attribute-blob"] == "AAE="


def test_batch_item_failures_name_the_failed_messages() -> None:
    batch = [delivery("a"), delivery("b")]
    answer = b'{"batchItemFailures": [{"itemIdentifier": "b"}]}'
    assert failed_items(answer, batch) == frozenset({"b"})


def test_an_answer_without_batch_item_failures_succeeds_whole() -> None:
    batch = [delivery("a")]
    for answer in (b"", b"ok", b"null", b'{"statusCode": 200}', b'{"batchItemFailures": []}'):
        assert failed_items(answer, batch) == frozenset(), answer


def test_a_failure_naming_no_item_of_the_batch_fails_it_whole() -> None:
    batch = [delivery("a")]
    for answer in (
        b'{"batchItemFailures": [{"itemIdentifier": "zzz"}]}',
        b'{"batchItemFailures": [{"itemIdentifier": ""}]}',
        b'{"batchItemFailures": [{}]}',
        b'{"batchItemFailures": "a"}',
    ):
        assert failed_items(answer, batch) is None, answer
