"""Who may read /metrics (issue 25, item 5): it names every account and queue, so with
`--auth sigv4` only a scrape carrying `--metrics-token` as a bearer token reads it;
without auth it stays open unless a token is set.

The in-memory store only: the refusal comes before any store is asked."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from .consoles import CREDENTIALS, TENANT_A, Server
from .processes import HopperProcess, start_hopper

pytestmark = pytest.mark.slow

TOKEN = "scrape-7f3a9c1e5b2d4068"


def _serving(tmp_path: Path, *options: str) -> Iterator[HopperProcess]:
    keys = tmp_path / "credentials.toml"
    keys.write_text(CREDENTIALS)
    hopper = start_hopper("--auth", "sigv4", "--credentials-file", str(keys), *options,
                          log=tmp_path / "hopper.log")
    try:
        yield hopper
    finally:
        assert hopper.stop() == 0, hopper.output()


@pytest.fixture
def without_token(tmp_path: Path) -> Iterator[HopperProcess]:
    yield from _serving(tmp_path)


@pytest.fixture
def with_token(tmp_path: Path) -> Iterator[HopperProcess]:
    yield from _serving(tmp_path, "--metrics-token", TOKEN)


def _tenant_queue(server: HopperProcess) -> str:
    """A queue of tenant A's, used once so that its series exist."""
    sqs = Server(server.url, auth=True).sqs(TENANT_A)
    url = sqs.create_queue(QueueName="tenant-a-payroll")["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="x")
    return "tenant-a-payroll"


def _scrape(server: HopperProcess, authorization: str | None = None) -> httpx.Response:
    headers = {} if authorization is None else {"authorization": authorization}
    return httpx.get(f"{server.url}/metrics", headers=headers)


def test_with_auth_and_no_token_metrics_names_no_tenant(without_token):
    # given a tenant's queue in use
    queue = _tenant_queue(without_token)

    # when anyone scrapes /metrics, then it is refused and names nothing
    answer = _scrape(without_token)
    assert answer.status_code == 401
    assert answer.headers["www-authenticate"].startswith("Bearer")
    assert queue not in answer.text and TENANT_A[2] not in answer.text
    assert "--metrics-token" in answer.text


def test_with_auth_only_the_metrics_token_reads_metrics(with_token):
    # given a tenant's queue in use
    queue = _tenant_queue(with_token)

    # then a scrape without the token, or with another, or with a signed-in tenant's
    # credentials, is refused; one with it reads every queue's series
    for authorization in (None, "Bearer wrong-token-0000000000", f"Basic {TOKEN}", TOKEN):
        refused = _scrape(with_token, authorization)
        assert refused.status_code == 401, authorization
        assert queue not in refused.text
    answer = _scrape(with_token, f"Bearer {TOKEN}")
    assert answer.status_code == 200
    assert f'queue="{queue}"' in answer.text and TENANT_A[2] in answer.text
    # /health stays open for probes
    assert httpx.get(f"{with_token.url}/health").status_code == 200


def test_without_auth_metrics_are_open_unless_a_token_is_set(tmp_path: Path):
    # a rate limit keys callers too, but is no authentication
    open_server = start_hopper("--rate-limit", "1000", log=tmp_path / "open.log")
    try:
        assert _scrape(open_server).status_code == 200
    finally:
        assert open_server.stop() == 0
    guarded = start_hopper("--metrics-token", TOKEN, log=tmp_path / "guarded.log")
    try:
        assert _scrape(guarded).status_code == 401
        assert _scrape(guarded, f"Bearer {TOKEN}").status_code == 200
    finally:
        assert guarded.stop() == 0


def test_a_short_metrics_token_is_refused_at_start():
    from hopper.settings import Settings, SettingsError

    with pytest.raises(SettingsError, match="at least 16"):
        Settings(metrics_token="short")
