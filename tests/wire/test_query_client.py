"""The query-protocol test client: parameter flattening, signing, response parsing.

Pure: no server; sending goes through an httpx mock transport.
"""

from __future__ import annotations

import importlib.util
import sys
from datetime import datetime
from pathlib import Path
from urllib.parse import parse_qsl

import httpx
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials


def load_query_client():
    # tests/server is a package and tests/wire is not, so `server.query_client` is only
    # importable here when pytest happened to collect tests/server first: load by path.
    path = Path(__file__).resolve().parents[1] / "server" / "query_client.py"
    spec = importlib.util.spec_from_file_location("hopper_tests_query_client", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through it
    spec.loader.exec_module(module)
    return module


query_client = load_query_client()
QueryClient = query_client.QueryClient
flatten = query_client.flatten
listed = query_client.listed
path_of = query_client.path_of

ENDPOINT = "http://127.0.0.1:9324"


# --- flattening ----------------------------------------------------------------------


def test_a_scalar_is_one_field():
    assert flatten("QueueName", "jobs") == {"QueueName": "jobs"}


def test_numbers_and_booleans_are_written_as_sqs_spells_them():
    assert flatten("VisibilityTimeout", 30) == {"VisibilityTimeout": "30"}
    assert flatten("FifoQueue", True) == {"FifoQueue": "true"}


def test_a_list_numbers_its_items_from_one():
    assert flatten("AttributeName", ["All", "Policy"]) == {
        "AttributeName.1": "All",
        "AttributeName.2": "Policy",
    }


def test_queue_attributes_are_a_map_of_name_and_value():
    assert flatten("Attribute", {"DelaySeconds": 5, "FifoQueue": "true"}) == {
        "Attribute.1.Name": "DelaySeconds",
        "Attribute.1.Value": "5",
        "Attribute.2.Name": "FifoQueue",
        "Attribute.2.Value": "true",
    }


def test_tags_are_a_map_of_key_and_value():
    assert flatten("Tag", {"team": "queues"}) == {"Tag.1.Key": "team", "Tag.1.Value": "queues"}


def test_message_attributes_are_a_map_of_structures():
    fields = flatten(
        "MessageAttribute",
        {
            "colour": {"DataType": "String", "StringValue": "blue"},
            "picture": {"DataType": "Binary.gif", "BinaryValue": b"\x00\xff"},
        },
    )
    assert fields == {
        "MessageAttribute.1.Name": "colour",
        "MessageAttribute.1.Value.DataType": "String",
        "MessageAttribute.1.Value.StringValue": "blue",
        "MessageAttribute.2.Name": "picture",
        "MessageAttribute.2.Value.DataType": "Binary.gif",
        "MessageAttribute.2.Value.BinaryValue": "AP8=",
    }


def test_batch_entries_are_numbered_structures_whose_maps_are_numbered_again():
    fields = flatten(
        "SendMessageBatchRequestEntry",
        [
            {"Id": "a", "MessageBody": "first"},
            {
                "Id": "b",
                "MessageBody": "second",
                "DelaySeconds": 3,
                "MessageAttribute": {"n": {"DataType": "Number", "StringValue": "7"}},
            },
        ],
    )
    assert fields == {
        "SendMessageBatchRequestEntry.1.Id": "a",
        "SendMessageBatchRequestEntry.1.MessageBody": "first",
        "SendMessageBatchRequestEntry.2.Id": "b",
        "SendMessageBatchRequestEntry.2.MessageBody": "second",
        "SendMessageBatchRequestEntry.2.DelaySeconds": "3",
        "SendMessageBatchRequestEntry.2.MessageAttribute.1.Name": "n",
        "SendMessageBatchRequestEntry.2.MessageAttribute.1.Value.DataType": "Number",
        "SendMessageBatchRequestEntry.2.MessageAttribute.1.Value.StringValue": "7",
    }


def test_an_empty_list_or_map_writes_no_fields():
    assert flatten("AttributeName", []) == {}
    assert flatten("Attribute", {}) == {}


# --- building signed requests --------------------------------------------------------


@pytest.fixture
def client():
    with QueryClient(ENDPOINT) as query:
        yield query


def test_a_post_carries_action_version_and_params_in_a_form_body(client):
    request = client.build("SendMessage", {"QueueUrl": "q", "MessageBody": "a b&c=é"})
    assert request.method == "POST"
    assert str(request.url) == ENDPOINT + "/"
    assert request.headers["Content-Type"].startswith("application/x-www-form-urlencoded")
    assert dict(parse_qsl(request.content.decode())) == {
        "Action": "SendMessage",
        "Version": "2012-11-05",
        "QueueUrl": "q",
        "MessageBody": "a b&c=é",
    }


def test_a_get_carries_the_params_in_the_query_string_and_no_body(client):
    request = client.build("GetQueueUrl", {"QueueName": "a b"}, method="GET")
    assert request.method == "GET"
    assert request.content == b""
    assert request.url.query == b"Action=GetQueueUrl&Version=2012-11-05&QueueName=a%20b"


def test_a_queue_url_or_its_path_selects_the_queue_endpoint(client):
    url = "http://localhost:9324/000000000000/jobs"
    assert path_of(url) == "/000000000000/jobs"
    assert client.build("PurgeQueue", {}, path=url).url.path == "/000000000000/jobs"
    assert client.build("PurgeQueue", {}, path=path_of(url)).url.path == "/000000000000/jobs"


def test_a_request_carries_a_sigv4_authorization_for_sqs_in_the_region(client):
    request = client.build("ListQueues", {})
    authorization = request.headers["Authorization"]
    day = request.headers["X-Amz-Date"][:8]
    assert authorization.startswith(
        f"AWS4-HMAC-SHA256 Credential=test/{day}/us-east-1/sqs/aws4_request, SignedHeaders="
    )
    assert "Signature=" in authorization


def test_an_unsigned_request_has_no_authorization(client):
    request = client.build("ListQueues", {}, signed=False)
    assert "Authorization" not in request.headers


def test_extra_headers_are_sent_and_signed(client):
    request = client.build("ListQueues", {}, headers={"x-amzn-query-mode": "true"})
    assert request.headers["x-amzn-query-mode"] == "true"
    assert "x-amzn-query-mode" in signed_headers(request)


@pytest.mark.parametrize("method", ["POST", "GET"])
def test_the_signature_verifies_over_the_request_exactly_as_httpx_sends_it(
    client, method, monkeypatch
):
    # Re-sign what httpx will put on the wire (host, headers, query, body) at the same
    # instant: any change httpx made to a signed part would change the signature.
    request = client.build("SendMessage", {"MessageBody": "x y+z~é"}, method=method)
    instant = datetime.strptime(request.headers["X-Amz-Date"], "%Y%m%dT%H%M%SZ")
    monkeypatch.setattr("botocore.auth.get_current_datetime", lambda: instant)
    signed = {name: request.headers[name] for name in signed_headers(request)}
    signed.pop("host", None)
    signed.pop("x-amz-date", None)
    again = AWSRequest(
        method=request.method, url=str(request.url), data=request.content, headers=signed
    )
    SigV4Auth(Credentials("test", "test"), "sqs", "us-east-1").add_auth(again)
    assert again.headers["Authorization"] == request.headers["Authorization"]


def signed_headers(request: httpx.Request) -> list[str]:
    authorization = request.headers["Authorization"]
    listed_part = authorization.split("SignedHeaders=")[1].split(",")[0]
    return listed_part.split(";")


# --- sending and parsing -------------------------------------------------------------


def mock_client(status: int, body: str, seen: list[httpx.Request]) -> QueryClient:
    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(status, text=body, headers={"Content-Type": "text/xml"})

    query = QueryClient(ENDPOINT)
    query.http = httpx.Client(transport=httpx.MockTransport(answer))
    return query


def test_call_sends_the_built_request_and_parses_the_result():
    body = (
        '<GetQueueUrlResponse xmlns="http://queue.amazonaws.com/doc/2012-11-05/">'
        "<GetQueueUrlResult><QueueUrl>http://h/000000000000/jobs</QueueUrl></GetQueueUrlResult>"
        "<ResponseMetadata><RequestId>r-1</RequestId></ResponseMetadata>"
        "</GetQueueUrlResponse>"
    )
    seen: list[httpx.Request] = []
    with mock_client(200, body, seen) as query:
        response = query.call("GetQueueUrl", {"QueueName": "jobs"})
    assert seen[0].headers["Authorization"].startswith("AWS4-HMAC-SHA256 ")
    assert response.status == 200
    assert response.result == {"QueueUrl": "http://h/000000000000/jobs"}
    assert response.error is None
    assert response.request_id == "r-1"


def test_call_returns_an_error_response_instead_of_raising():
    body = (
        '<ErrorResponse xmlns="http://queue.amazonaws.com/doc/2012-11-05/"><Error>'
        "<Type>Sender</Type><Code>AWS.SimpleQueueService.NonExistentQueue</Code>"
        "<Message>The specified queue does not exist for this wsdl version.</Message>"
        "<Detail/></Error><RequestId>r-2</RequestId></ErrorResponse>"
    )
    with mock_client(400, body, []) as query:
        response = query.call("GetQueueUrl", {"QueueName": "missing"})
    assert response.status == 400
    assert response.result is None
    assert response.error["Code"] == "AWS.SimpleQueueService.NonExistentQueue"
    assert response.error["Type"] == "Sender"
    assert response.request_id == "r-2"


def test_a_body_that_is_not_xml_parses_to_none():
    with mock_client(500, "Internal Server Error", []) as query:
        response = query.call("ListQueues", {})
    assert response.xml is None
    assert response.text == "Internal Server Error"


def test_listed_gives_a_list_for_none_one_or_several_elements():
    assert listed(None) == []
    assert listed({"MessageId": "1"}) == [{"MessageId": "1"}]
    assert listed([{"MessageId": "1"}, {"MessageId": "2"}]) == [
        {"MessageId": "1"},
        {"MessageId": "2"},
    ]
