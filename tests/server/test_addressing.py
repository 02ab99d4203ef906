"""How a request names its queue and its operation (issue 17, items 3 and 5), as AWS
answers it, on both stores: a bare queue name where a QueueUrl is expected, the query
API over GET and on queue URLs, and query answers in JSON for a client that asks."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest

from .protocols import Caller
from .query_client import QueryClient, path_of


@pytest.fixture(params=["json", "query"])
def caller(request: pytest.FixtureRequest, endpoint: str) -> Iterator[Caller]:
    client = Caller(request.param, endpoint)
    yield client
    client.close()


@pytest.fixture
def query(endpoint: str) -> Iterator[QueryClient]:
    with QueryClient(endpoint) as client:
        yield client


@pytest.fixture
def querier(endpoint: str) -> Iterator[Caller]:
    client = Caller("query", endpoint)
    yield client
    client.close()


def unique(name: str = "addr") -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


def new_queue(caller: Caller) -> tuple[str, str]:
    name = unique()
    url = caller("CreateQueue", QueueName=name).value("QueueUrl")
    return name, str(url)


# --- 3: a bare queue name where a QueueUrl is expected -------------------------------------


def test_a_bare_queue_name_names_the_callers_queue_in_every_action(caller):
    name, url = new_queue(caller)
    assert caller("SendMessage", QueueUrl=name, MessageBody="by name").status == 200
    (message,) = caller("ReceiveMessage", QueueUrl=name).messages()
    assert message["Body"] == "by name"
    deleted = caller("DeleteMessage", QueueUrl=name, ReceiptHandle=message["ReceiptHandle"])
    assert deleted.status == 200
    set_ = caller("SetQueueAttributes", QueueUrl=name, Attributes={"DelaySeconds": "3"})
    assert set_.status == 200, set_
    got = caller("GetQueueAttributes", QueueUrl=name, AttributeNames=["DelaySeconds"])
    assert got.attributes() == {"DelaySeconds": "3"}
    assert caller("TagQueue", QueueUrl=name, Tags={"team": "blue"}).status == 200
    assert caller("PurgeQueue", QueueUrl=name).status == 200
    assert caller("DeleteQueue", QueueUrl=name).status == 200
    missing = caller("GetQueueAttributes", QueueUrl=url, AttributeNames=["All"])
    assert missing.code == "AWS.SimpleQueueService.NonExistentQueue"


def test_a_bare_name_of_no_queue_is_a_missing_queue(caller):
    answer = caller("SendMessage", QueueUrl=unique("missing"), MessageBody="x")
    assert (answer.status, answer.code) == (400, "AWS.SimpleQueueService.NonExistentQueue")


# --- 5: the query API over GET and on queue URLs ---------------------------------------------


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_get_queue_url_on_a_queue_url_answers_the_named_queue(query, querier, method):
    _, here = new_queue(querier)
    other, other_url = new_queue(querier)
    answer = query.call("GetQueueUrl", {"QueueName": other}, method=method, path=path_of(here))
    assert answer.status == 200, answer.text
    assert answer.result["QueueUrl"] == other_url


@pytest.mark.parametrize("action", ["ListQueues", "CreateQueue"])
def test_list_and_create_queue_on_a_queue_url_are_invalid_actions(query, querier, action):
    _, url = new_queue(querier)
    answer = query.call(action, {"QueueName": unique()}, path=path_of(url))
    assert (answer.status, answer.error["Code"]) == (400, "InvalidAction")


@pytest.mark.parametrize("accept", [None, "application/json"])
@pytest.mark.parametrize("where", ["root", "queue"])
def test_a_get_without_action_is_a_404_unknown_operation(endpoint, querier, accept, where):
    path = "/"
    if where == "queue":
        _, url = new_queue(querier)
        path = path_of(url)
    headers = {"Accept": accept} if accept else {}
    response = httpx.get(endpoint + path, headers=headers)
    assert response.status_code == 404
    assert response.content == b"<UnknownOperationException/>"


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_query_request_accepting_json_is_answered_in_json_of_the_query_shape(query, method):
    name = unique()
    json_accepted = {"Accept": "application/json"}
    created = query.call("CreateQueue", {"QueueName": name}, method=method, headers=json_accepted)
    assert created.headers["content-type"].startswith("application/json")
    url = httpx.Response(200, content=created.text).json()[
        "CreateQueueResponse"]["CreateQueueResult"]["QueueUrl"]

    listed = query.call(
        "ListQueues", {"QueueNamePrefix": name}, method=method, headers=json_accepted
    )
    document = httpx.Response(200, content=listed.text).json()
    assert document["ListQueuesResponse"]["ListQueuesResult"]["queueUrls"] == [url]
    assert document["ListQueuesResponse"]["ResponseMetadata"]["RequestId"]

    query.call("SendMessage", {"QueueUrl": url, "MessageBody": "json please"}, method=method)
    received = query.call("ReceiveMessage", {"QueueUrl": url}, method=method, headers=json_accepted)
    result = httpx.Response(200, content=received.text).json()["ReceiveMessageResponse"][
        "ReceiveMessageResult"]
    assert result["messages"][0]["Body"] == "json please"


def test_a_query_error_accepting_json_is_json_too(query):
    answer = query.call(
        "GetQueueUrl", {"QueueName": unique("missing")}, headers={"Accept": "application/json"}
    )
    assert answer.status == 400
    error = httpx.Response(400, content=answer.text).json()["ErrorResponse"]["Error"]
    assert error["Code"] == "AWS.SimpleQueueService.NonExistentQueue"
