"""The console's JSON API over real HTTP, on a live server (in-memory store and
PostgreSQL, without auth and with `--auth sigv4`): what it shows, each action, its
refusals (a 4xx JSON error, never a 500), and with auth on, that a tenant sees nothing
of another tenant's queues or messages."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from .consoles import (
    API,
    TENANT_A,
    TENANT_B,
    Server,
    console_server,
    dead_letter_pair,
    depth,
    unique,
)

SERVERS = ["memory-off", "postgres-off", "memory-sigv4", "postgres-sigv4"]


@pytest.fixture(scope="module", params=SERVERS)
def server(request: pytest.FixtureRequest) -> Iterator[Server]:
    store, auth = request.param.split("-")
    with console_server(store, auth == "sigv4") as server:
        yield server


def test_a_queue_page_shows_counts_attributes_relations_and_history(server: Server) -> None:
    sqs = server.sqs()
    source_name, source, dlq_name, _ = dead_letter_pair(sqs)
    sqs.send_message(QueueUrl=source, MessageBody="waiting")
    account = server.account()
    with server.api() as api:
        names = [q["name"] for q in api.get("/queues").json()["queues"]]
        assert {source_name, dlq_name} <= set(names)
        page = api.get(f"/queues/{account}/{source_name}").json()
        assert page["queue"]["visible"] == 1
        assert page["queue"]["dead_letter_target"] == dlq_name
        assert page["queue"]["dead_letter_depth"] == 1
        assert page["attributes"]["QueueArn"].endswith(f":{account}:{source_name}")
        assert '"maxReceiveCount":1' in page["attributes"]["RedrivePolicy"].replace(" ", "")
        # The history is the server's: this page's first look already has the sends.
        points = page["history"]["points"]
        assert len(points) == 120 and page["history"]["interval"] == 30
        assert sum(p["sent"] for p in points) == 2
        assert sum(p["received"] for p in points) >= 1
        assert points[-1]["depth"] == 1
        dlq = api.get(f"/queues/{account}/{dlq_name}").json()
        assert dlq["queue"]["dead_letter_sources"] == [source_name]
        assert dlq["tasks"] == []


def test_the_message_browser_shows_every_state_and_changes_nothing(server: Server) -> None:
    sqs = server.sqs()
    _, source, dlq_name, dlq = dead_letter_pair(sqs, body="dead one")
    name = unique("browse")
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    sqs.send_message(
        QueueUrl=url, MessageBody="held",
        MessageAttributes={"colour": {"DataType": "String", "StringValue": "blue"}},
    )
    [held] = sqs.receive_message(
        QueueUrl=url, VisibilityTimeout=600,
        MessageSystemAttributeNames=["All"], MessageAttributeNames=["All"],
    )["Messages"]
    sqs.send_message(QueueUrl=url, MessageBody="free")
    sqs.send_message(QueueUrl=url, MessageBody="later", DelaySeconds=600)
    account = server.account()
    with server.api() as api:
        for _ in range(2):  # twice: the first look changed nothing the second sees
            messages = api.get(f"/queues/{account}/{name}/messages").json()["messages"]
            states = {m["body"]: m for m in messages}
            assert {b: m["state"] for b, m in states.items()} == {
                "held": "in_flight", "free": "visible", "later": "delayed"
            }
            assert states["held"]["receive_count"] == 1 and states["held"]["token"] > 0
            assert states["held"]["attributes"] == {
                "colour": {"DataType": "String", "StringValue": "blue"}
            }
            assert states["free"]["receive_count"] == 0 and states["free"]["token"] == 0
        [dead] = api.get(f"/queues/{account}/{dlq_name}/messages").json()["messages"]
        assert (dead["body"], dead["dead"], dead["state"]) == ("dead one", True, "visible")
    # Nothing was received: the held message's receipt is still the current one.
    sqs.delete_message(QueueUrl=url, ReceiptHandle=held["ReceiptHandle"])
    [free] = sqs.receive_message(
        QueueUrl=url, MessageSystemAttributeNames=["ApproximateReceiveCount"]
    )["Messages"]
    assert (free["Body"], free["Attributes"]["ApproximateReceiveCount"]) == ("free", "1")
    assert depth(sqs, dlq) == 1
    del source


def test_send_delete_one_and_purge_go_through_sqs_rules(server: Server) -> None:
    sqs = server.sqs()
    account = server.account()
    name, fifo = unique("act"), unique("act") + ".fifo"
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    sqs.create_queue(QueueName=fifo, Attributes={"FifoQueue": "true"})
    with server.api() as api:
        sent = api.post(f"/queues/{account}/{name}/messages", json={
            "body": "from the console",
            "attributes": {"kind": {"DataType": "Number", "StringValue": "7"},
                           "raw": {"DataType": "Binary", "BinaryValue": "AAE="}},
        })
        assert sent.status_code == 200, sent.text
        kept = api.post(f"/queues/{account}/{name}/messages", json={"body": "kept"}).json()
        [message] = sqs.receive_message(
            QueueUrl=url, MessageAttributeNames=["All"], VisibilityTimeout=600
        )["Messages"]
        assert message["Body"] == "from the console"
        assert message["MessageAttributes"]["kind"] == {"DataType": "Number", "StringValue": "7"}
        assert message["MessageAttributes"]["raw"]["BinaryValue"] == b"\x00\x01"
        # Delete that one message while it is in flight: its receipt then finds it gone.
        gone = api.delete(f"/queues/{account}/{name}/messages/{message['MessageId']}")
        assert gone.status_code == 200
        again = api.delete(f"/queues/{account}/{name}/messages/{message['MessageId']}")
        assert again.status_code == 404 and again.json()["code"] == "MessageNotFound"
        left = api.get(f"/queues/{account}/{name}/messages").json()["messages"]
        assert [m["id"] for m in left] == [kept["message_id"]]
        # SQS's rules apply: a FIFO send without a group is refused, with one it goes.
        refused = api.post(f"/queues/{account}/{fifo}/messages", json={"body": "x"})
        assert refused.status_code == 400 and refused.json()["code"] == "MissingParameter"
        ordered = api.post(f"/queues/{account}/{fifo}/messages", json={
            "body": "x", "group_id": "g", "deduplication_id": "d1"
        }).json()
        duplicate = api.post(f"/queues/{account}/{fifo}/messages", json={
            "body": "x", "group_id": "g", "deduplication_id": "d1"
        }).json()
        assert ordered["sequence_number"] and duplicate["duplicate"] is True
        assert api.post(f"/queues/{account}/{name}/purge").status_code == 200
        assert depth(sqs, url) == 0


def test_a_redrive_moves_dead_letters_back_and_can_be_cancelled(server: Server) -> None:
    sqs = server.sqs()
    account = server.account()
    source_name, source, dlq_name, dlq = dead_letter_pair(sqs, dead=4)
    other = unique("elsewhere")
    other_url = sqs.create_queue(QueueName=other)["QueueUrl"]
    with server.api() as api:
        slow = api.post(f"/queues/{account}/{dlq_name}/redrive", json={"max_per_second": 1})
        assert slow.status_code == 200, slow.text
        task = slow.json()["task"]
        assert (task["status"], task["to_move"]) == ("RUNNING", 4)
        busy = api.post(f"/queues/{account}/{dlq_name}/redrive", json={})
        assert busy.status_code == 400 and "already a task" in busy.json()["error"]
        cancelled = api.post(f"/queues/{account}/{dlq_name}/redrive/{task['id']}/cancel")
        assert cancelled.json()["task"]["status"] == "CANCELLING"
        deadline = time.monotonic() + 15
        while api.get(f"/queues/{account}/{dlq_name}").json()["tasks"][0]["status"] != "CANCELLED":
            assert time.monotonic() < deadline
            time.sleep(0.2)
        moved_back = depth(sqs, source)
        assert moved_back < 4
        started = api.post(f"/queues/{account}/{dlq_name}/redrive", json={"destination": other})
        assert started.status_code == 200, started.text
        deadline = time.monotonic() + 15
        while depth(sqs, dlq):
            assert time.monotonic() < deadline
            time.sleep(0.2)
        assert depth(sqs, other_url) == 4 - moved_back
        [done, first] = api.get(f"/queues/{account}/{dlq_name}").json()["tasks"]
        assert (done["status"], done["destination"], first["status"]) == (
            "COMPLETED", other, "CANCELLED"
        )
    del source_name


BAD = [
    ("GET", "/queues/{account}/%00/messages", None, 400),
    ("GET", "/queues/{account}/no-such-queue", None, 404),
    ("GET", "/queues/{account}/no-such-queue/messages", None, 404),
    ("POST", "/queues/{account}/{queue}/messages", b"[1", 400),
    ("POST", "/queues/{account}/{queue}/messages", b'"text"', 400),
    ("POST", "/queues/{account}/{queue}/messages", b'{"body": 5}', 400),
    ("POST", "/queues/{account}/{queue}/messages", b'{"body": ""}', 400),
    ("POST", "/queues/{account}/{queue}/messages", b'{"body": "a\\u0000b"}', 400),
    ("POST", "/queues/{account}/{queue}/messages", b'{"body": "b", "attributes": [1]}', 400),
    ("POST", "/queues/{account}/{queue}/messages",
     b'{"body": "b", "attributes": {"a": {"DataType": "Binary", "BinaryValue": "%%"}}}', 400),
    ("POST", "/queues/{account}/{queue}/messages",
     b'{"body": "b", "attributes": {"a.": {"DataType": "String", "StringValue": "v"}}}', 400),
    ("POST", "/queues/{account}/{queue}/messages", b'{"body": "b", "delay_seconds": "1e9"}', 400),
    ("POST", "/queues/{account}/{queue}/messages", b'{"body": "b", "delay_seconds": 901}', 400),
    ("POST", "/queues/{account}/{queue}/messages", b'{"body": "b", "group_id": "a b"}', 400),
    ("DELETE", "/queues/{account}/{queue}/messages/%00", None, 400),
    ("DELETE", "/queues/{account}/{queue}/messages/nothing-here", None, 404),
    ("POST", "/queues/{account}/{queue}/redrive", b"{}", 400),  # not a dead-letter queue
    ("POST", "/queues/{account}/{queue}/redrive", b'{"max_per_second": 0}', 400),
    ("POST", "/queues/{account}/{queue}/redrive", b'{"max_per_second": "x"}', 400),
    ("POST", "/queues/{account}/{queue}/redrive", b'{"destination": 3}', 400),
    ("POST", "/queues/{account}/{queue}/redrive/no-task/cancel", None, 404),
    ("POST", "/queues/{account}/{queue}/redrive/%00/cancel", None, 400),
    ("POST", "/session", b'{"access_key": "AKIDTENANTA", "secret_key": "wrong"}', None),
]


def test_bad_input_is_a_4xx_json_error_never_a_500(server: Server) -> None:
    sqs = server.sqs()
    queue = unique("bad")
    sqs.create_queue(QueueName=queue)
    with server.api() as api:
        for method, path, body, status in BAD:
            target = path.format(account=server.account(), queue=queue)
            answer = api.request(method, target, content=body)
            expected = status or (401 if server.auth else 400)
            assert answer.status_code == expected, (method, target, body, answer.text)
            assert isinstance(answer.json()["error"], str)


# The tests below need two tenants: they run on the servers with --auth sigv4 only.
WITH_AUTH = pytest.mark.parametrize(
    "server", [s for s in SERVERS if s.endswith("sigv4")], indirect=True
)


@WITH_AUTH
def test_with_auth_a_tenant_sees_and_touches_nothing_of_another_tenant(
    server: Server,
) -> None:
    theirs = server.sqs(TENANT_B)
    secret_name = unique("tenant-b")
    secret_url = theirs.create_queue(QueueName=secret_name)["QueueUrl"]
    theirs.send_message(QueueUrl=secret_url, MessageBody="b's own secret")
    with server.api(TENANT_B) as api:
        [b_message] = api.get(f"/queues/{TENANT_B[2]}/{secret_name}/messages").json()["messages"]
    mine = server.sqs(TENANT_A)
    mine_name = unique("tenant-a")
    mine.create_queue(QueueName=mine_name)
    # Tenant A's queue in another region is A's too, under a region-qualified account.
    server.sqs(TENANT_A, region="eu-west-1").create_queue(QueueName=mine_name)
    b_queue = f"/queues/{TENANT_B[2]}/{secret_name}"
    with server.api(TENANT_A) as api:
        listed = api.get("/queues").json()["queues"]
        assert {q["account"] for q in listed} == {TENANT_A[2], f"{TENANT_A[2]}:eu-west-1"}
        assert secret_name not in {q["name"] for q in listed}
        for method, path, body in [
            ("GET", b_queue, None),
            ("GET", f"{b_queue}/messages", None),
            ("POST", f"{b_queue}/messages", {"body": "intruder"}),
            ("DELETE", f"{b_queue}/messages/{b_message['id']}", None),
            ("POST", f"{b_queue}/purge", None),
            ("POST", f"{b_queue}/redrive", {}),
            ("POST", f"{b_queue}/redrive/any/cancel", None),
        ]:
            answer = api.request(method, path, json=body)
            assert answer.status_code == 404, (method, path, answer.text)
            assert "b's own secret" not in answer.text
    # Nothing of B's changed.
    [still] = theirs.receive_message(QueueUrl=secret_url)["Messages"]
    assert still["Body"] == "b's own secret"
    assert depth(theirs, secret_url) == 1


@WITH_AUTH
def test_with_auth_no_route_answers_without_a_valid_session(server: Server) -> None:
    with server.api(TENANT_A) as api:
        good = api.headers["authorization"]
    key, expires, mac = good.removeprefix("Bearer ").split(".")
    forged = [
        None, "Bearer", "Bearer nonsense", f"Basic {key}",
        f"Bearer {key}.{int(expires) + 1}.{mac}",  # a longer life, same signature
        f"Bearer AKIDTENANTB.{expires}.{mac}",  # another tenant's key
        f"Bearer {key}.{int(time.time()) - 1}.{mac}",
    ]
    routes = [("GET", "/session"), ("GET", "/queues"), ("GET", "/queues/111111111111/q"),
              ("GET", "/queues/111111111111/q/messages"),
              ("POST", "/queues/111111111111/q/messages"), ("POST", "/queues/111111111111/q/purge"),
              ("DELETE", "/queues/111111111111/q/messages/m"),
              ("POST", "/queues/111111111111/q/redrive")]
    for header in forged:
        headers = {} if header is None else {"authorization": header}
        for method, path in routes:
            answer = httpx.request(method, f"{server.url}{API}{path}", headers=headers)
            assert answer.status_code == 401, (header, method, path)
            assert answer.json()["code"] == "NotSignedIn"
    assert httpx.get(f"{server.url}{API}/session", headers={"authorization": good}).json() == {
        "auth": "sigv4", "account": TENANT_A[2]
    }
