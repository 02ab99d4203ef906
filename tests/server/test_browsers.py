"""What a web page may make a browser ask of a local hopper with auth off (issue 25,
item 3): nothing but what hopper's own console asks, and what `--allow-origin` and
`--allow-host` allow. Each request is shaped as a browser sends it (its `Origin`,
`Sec-Fetch-*` and `Host` headers); SDKs send none of these, and the client matrix
(tests/compat) and the conformance run pass with the checks on.

The in-memory store only: the checks come before any store is asked."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from .consoles import API, CONSOLE_HEADERS
from .processes import HopperProcess, start_hopper

pytestmark = pytest.mark.slow

EVIL = "http://evil.example"
FRIEND = "http://localhost:3000"
FORM = {"content-type": "application/x-www-form-urlencoded"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HopperProcess]:
    log = tmp_path_factory.mktemp("browsers") / "hopper.log"
    hopper = start_hopper("--relaxed-timing", "--allow-origin", FRIEND,
                          "--allow-host", "hopper.test", log=log)
    try:
        yield hopper
    finally:
        assert hopper.stop() == 0, hopper.output()


def _queues(server: HopperProcess) -> list[str]:
    answer = httpx.post(server.url, data={"Action": "ListQueues"},
                        headers={"accept": "application/json"})
    result = answer.json()["ListQueuesResponse"]["ListQueuesResult"]
    return [url.rsplit("/", 1)[1] for url in result.get("queueUrls") or []]


def _create(server: HopperProcess, name: str, **headers: str) -> httpx.Response:
    return httpx.post(server.url, data={"Action": "CreateQueue", "QueueName": name},
                      headers={**FORM, **headers})


def _refused(answer: httpx.Response) -> None:
    assert answer.status_code == 403, answer.text
    assert "AccessDenied" in answer.text


def test_a_cross_site_form_cannot_create_a_queue(server):
    # when another site's page posts CreateQueue as a form (no preflight)
    answer = _create(server, "forged", origin=EVIL, **{"sec-fetch-site": "cross-site"})

    # then it is refused, in the query protocol, and no queue exists
    _refused(answer)
    assert "<Code>AccessDenied</Code>" in answer.text
    assert "forged" not in _queues(server)


def test_a_cross_site_json_request_is_refused_in_json(server):
    answer = httpx.post(
        server.url, content=json.dumps({"QueueName": "forged-json"}),
        headers={"origin": EVIL, "content-type": "application/x-amz-json-1.0",
                 "x-amz-target": "AmazonSQS.CreateQueue"},
    )
    _refused(answer)
    assert answer.json()["__type"].endswith("AccessDeniedException")
    assert "forged-json" not in _queues(server)


def test_a_cross_site_image_cannot_delete_a_queue(server):
    # given a queue
    assert _create(server, "kept").status_code == 200

    # when another site's <img> GETs DeleteQueue (no Origin on such a request)
    answer = httpx.get(
        f"{server.url}/000000000000/kept", params={"Action": "DeleteQueue"},
        headers={"sec-fetch-site": "cross-site", "sec-fetch-mode": "no-cors"},
    )

    # then it is refused and the queue is still there; a followed link to the console
    # still opens it
    _refused(answer)
    assert "kept" in _queues(server)
    link = httpx.get(f"{server.url}/dashboard", headers={
        "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate"})
    assert link.status_code == 200


def test_a_rebinding_page_cannot_read_answers(server):
    # when a page whose name points at 127.0.0.1 asks with its own name as Host
    name = f"attacker.example:{server.url.rsplit(':', 1)[1]}"
    answer = httpx.get(f"{server.url}/", params={"Action": "ListQueues"},
                       headers={"host": name})

    # then it is refused before any queue is named; /health still answers
    _refused(answer)
    assert "QueueUrl" not in answer.text
    assert httpx.get(f"{server.url}/health", headers={"host": name}).status_code == 200


def test_loopback_and_allowed_hosts_and_origins_are_served(server):
    port = server.url.rsplit(":", 1)[1]
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", "[::1]", f"0.0.0.0:{port}",
                 "hopper.test"):
        listed = httpx.get(f"{server.url}/", params={"Action": "ListQueues"},
                           headers={"host": host})
        assert listed.status_code == 200, (host, listed.text)
    # the console's own origin, and one allowed with --allow-origin
    for origin in (server.url, FRIEND):
        answer = _create(server, "welcome", origin=origin)
        assert answer.status_code == 200, (origin, answer.text)


def test_console_actions_from_another_site_are_refused(server):
    # given a queue holding a message
    assert _create(server, "precious").status_code == 200
    httpx.post(f"{server.url}/000000000000/precious",
               data={"Action": "SendMessage", "MessageBody": "keep me"})
    purge = f"{server.url}{API}/queues/000000000000/precious/purge"

    # when another site posts a form to the console's purge (with an Origin, or in a
    # browser that sends none), then both are refused
    _refused(httpx.post(purge, headers={**FORM, "origin": EVIL}))
    without_header = httpx.post(purge, headers=FORM)
    assert without_header.status_code == 403
    assert without_header.json()["code"] == "AccessDenied"
    queue = httpx.get(f"{server.url}{API}/queues/000000000000/precious").json()
    assert queue["queue"]["visible"] == 1

    # and the console's own request (its header, its origin) purges
    own = httpx.post(purge, headers={**CONSOLE_HEADERS, "origin": server.url})
    assert own.status_code == 200, own.text


def test_settings_decide_where_the_host_rule_applies():
    from hopper.browsers import ANY, Browsers
    from hopper.settings import Settings

    assert Browsers.from_settings(Settings()).hosts == frozenset()
    assert Browsers.from_settings(Settings(host="0.0.0.0")).hosts == {ANY}
    allowed = Browsers.from_settings(Settings(host="0.0.0.0", allow_host="q.example"))
    assert allowed.hosts == {"q.example"}



def test_the_console_page_runs_only_its_own_files_and_cannot_be_framed(server):
    # Issue 25, item 8: with auth off its purge and delete buttons could be clickjacked.
    for page in (httpx.get(f"{server.url}/dashboard"),
                 httpx.get(f"{server.url}/", headers={"accept": "text/html"})):
        assert page.status_code == 200 and "<html" in page.text
        policy = page.headers["content-security-policy"]
        assert "frame-ancestors 'none'" in policy and "script-src 'self'" in policy
        assert "unsafe-inline" not in policy
        assert page.headers["x-frame-options"] == "DENY"
        assert page.headers["x-content-type-options"] == "nosniff"
    script = httpx.get(f"{server.url}/dashboard/static/dashboard.js")
    assert script.status_code == 200
    assert script.headers["x-content-type-options"] == "nosniff"


def test_a_hosts_answer_is_the_same_when_remembered_and_the_memory_stays_bounded():
    from hopper.browsers import HOSTS_REMEMBERED, Browsers

    browsers = Browsers(frozenset(), frozenset())
    for _ in range(2):  # the second time from memory
        assert browsers._host_allowed("127.0.0.1:9324")
        assert not browsers._host_allowed("rebound.example:9324")
    for n in range(HOSTS_REMEMBERED * 2):
        browsers._host_allowed(f"h{n}.example")
    assert len(browsers._hosts_seen) <= HOSTS_REMEMBERED
    assert not browsers._host_allowed("rebound.example:9324")


def test_a_repeated_origin_is_judged_by_its_first_value(server):
    # The direct path judges the headers it decoded for the call (first values), the
    # ASGI path the scope's: both must read a repeated header alike.
    for origins, status in (((EVIL, FRIEND), 403), ((FRIEND, EVIL), 200)):
        answer = httpx.post(
            server.url, data={"Action": "CreateQueue", "QueueName": "twice"},
            headers=[*FORM.items(), *(("origin", origin) for origin in origins)],
        )
        assert answer.status_code == status, (origins, answer.text)
