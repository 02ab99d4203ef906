"""The server end to end: boto3 against a live process, raw requests, and the transport
in-process with a stand-in action table (so its error handling is pinned down whatever
the real actions do)."""

from __future__ import annotations

import http.client
import json
import socket
import uuid
from urllib.parse import urlsplit

import httpx
import pytest

from hopper.app import create_app
from hopper.core.errors import QueueNotFound
from hopper.core.model import QueueKey
from hopper.settings import Settings

JSON_HEADERS = {"Content-Type": "application/x-amz-json-1.0"}
FORM = "application/x-www-form-urlencoded"


def unique(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


# --- through boto3, against the live server -------------------------------------------


def test_a_message_is_created_sent_received_and_deleted(sqs):
    url = sqs.create_queue(QueueName=unique("smoke"))["QueueUrl"]
    sent = sqs.send_message(QueueUrl=url, MessageBody="hello")
    received = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1)["Messages"]
    assert [m["Body"] for m in received] == ["hello"]
    assert received[0]["MessageId"] == sent["MessageId"]
    sqs.delete_message(QueueUrl=url, ReceiptHandle=received[0]["ReceiptHandle"])
    assert "Messages" not in sqs.receive_message(QueueUrl=url)


def test_an_unknown_queue_is_queue_does_not_exist_with_the_query_code(sqs):
    with pytest.raises(sqs.exceptions.QueueDoesNotExist) as caught:
        sqs.get_queue_url(QueueName=unique("missing"))
    assert caught.value.response["Error"]["Code"] == "AWS.SimpleQueueService.NonExistentQueue"


# --- raw requests, against the live server -----------------------------------------------


def test_health_answers_ok(endpoint):
    response = httpx.get(f"{endpoint}/health")
    assert (response.status_code, response.json()) == (200, {"status": "ok"})


def test_a_malformed_json_body_is_a_400_json_error(endpoint):
    headers = dict(JSON_HEADERS, **{"X-Amz-Target": "AmazonSQS.ListQueues"})
    response = httpx.post(endpoint, content=b"{not json", headers=headers)
    assert response.status_code == 400
    assert response.json()["__type"] == "com.amazon.coral.service#SerializationException"


def test_a_body_declared_larger_than_the_bound_is_refused_with_413(endpoint):
    address = urlsplit(endpoint)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=10)
    connection.putrequest("POST", "/")
    connection.putheader("Content-Type", JSON_HEADERS["Content-Type"])
    connection.putheader("X-Amz-Target", "AmazonSQS.ListQueues")
    connection.putheader("Content-Length", str(Settings().max_body_bytes + 1))
    connection.endheaders()  # and never send the body: the server must not wait for it
    response = connection.getresponse()
    assert response.status == 413
    assert json.loads(response.read())["__type"].endswith("#RequestEntityTooLarge")
    connection.close()


def test_a_client_that_hangs_up_mid_body_is_not_answered_and_the_server_goes_on(
    endpoint, sqs
):
    failures_before = internal_failures(endpoint)
    address = urlsplit(endpoint)
    with socket.create_connection((address.hostname, address.port), timeout=10) as raw:
        raw.sendall(
            b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-amz-json-1.0\r\n"
            b"X-Amz-Target: AmazonSQS.SendMessage\r\nContent-Length: 100\r\n\r\n{\"Queue"
        )
        raw.shutdown(socket.SHUT_WR)
        assert raw.recv(4096) == b""  # closed without an answer (no 500, no error page)
    url = sqs.create_queue(QueueName=unique("after-hang-up"))["QueueUrl"]
    assert sqs.send_message(QueueUrl=url, MessageBody="still here")["MessageId"]
    assert internal_failures(endpoint) == failures_before  # not counted as a failure


def internal_failures(endpoint: str) -> float:
    """Requests the live server answered with InternalFailure, by its /metrics."""
    text = httpx.get(f"{endpoint}/metrics").text
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("hopper_requests_total{") and 'outcome="InternalFailure"' in line
    )


def test_a_query_request_is_answered_in_xml(endpoint):
    response = httpx.post(endpoint, content=b"Action=ListQueues", headers={"Content-Type": FORM})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/xml")
    assert b"<ListQueuesResponse" in response.content


def test_a_get_of_a_queue_url_without_action_is_a_404(endpoint):
    response = httpx.get(f"{endpoint}/000000000000/{unique('q')}")
    assert response.status_code == 404
    assert response.content == b"<UnknownOperationException/>"


# --- the transport in-process, with stand-in actions --------------------------------------


async def echo_context(service, ctx, params):
    return {"Context": [ctx.protocol, ctx.base_url, ctx.path_queue and ctx.path_queue.name],
            "Params": params}


async def explode(service, ctx, params):
    raise RuntimeError("a bug")


async def missing_queue(service, ctx, params):
    raise QueueNotFound(QueueKey("000000000000", "gone"))


STAND_INS = {"ListQueues": echo_context, "SendMessage": explode, "DeleteQueue": missing_queue}


@pytest.fixture
async def client():
    # A Host of its own: the base URL must come from it (allowed, as hopper listens on
    # loopback: hopper.browsers).
    app = create_app(Settings(allow_host="example"), actions=STAND_INS)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://example:9324") as client:
        yield client


def json_call(action: str, body: bytes = b"{}", path: str = "/") -> dict:
    return {"url": path, "content": body,
            "headers": dict(JSON_HEADERS, **{"X-Amz-Target": f"AmazonSQS.{action}"})}


async def test_handlers_see_the_protocol_base_url_and_queue_path(client):
    response = await client.post(**json_call("ListQueues", b'{"A": 1}', "/000000000000/jobs"))
    assert response.status_code == 200
    assert response.json() == {"Context": ["json", "http://example:9324", "jobs"],
                               "Params": {"A": 1}}
    assert response.headers["x-amzn-RequestId"]


async def test_an_unexpected_exception_is_internal_failure_in_json(client, caplog):
    response = await client.post(**json_call("SendMessage"))
    assert response.status_code == 500
    assert response.json()["__type"] == "com.amazon.coral.service#InternalFailure"
    assert response.headers["x-amzn-query-error"] == "InternalFailure;Receiver"
    assert "a bug" in caplog.text


async def test_an_unexpected_exception_is_internal_failure_in_xml(client):
    response = await client.post("/", content=b"Action=SendMessage", headers={"Content-Type": FORM})
    assert response.status_code == 500
    assert b"<Type>Receiver</Type><Code>InternalFailure</Code>" in response.content


async def test_a_core_error_is_translated_by_the_one_table(client):
    response = await client.post(**json_call("DeleteQueue"))
    assert response.status_code == 400
    expected = "AWS.SimpleQueueService.NonExistentQueue;Sender"
    assert response.headers["x-amzn-query-error"] == expected


async def test_an_action_without_a_handler_is_invalid_action(client):
    response = await client.post(**json_call("PurgeQueue"))
    assert response.status_code == 400
    assert response.headers["x-amzn-query-error"] == "InvalidAction;Sender"


async def test_create_queue_sent_to_a_queue_url_is_invalid_action(client):
    response = await client.post(
        "/000000000000/jobs", content=b"Action=CreateQueue&QueueName=x",
        headers={"Content-Type": FORM},
    )
    assert response.status_code == 400
    assert b"The action CreateQueue is not valid for this endpoint." in response.content


async def test_an_unknown_path_is_an_unknown_operation(client):
    response = await client.get("/a/b/c")
    assert response.status_code == 404
