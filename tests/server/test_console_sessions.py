"""Console sessions under `--auth sigv4` (issue 25, item 6), on a live server: whoever
holds a key's secret can sign a token, so the server caps what a token may claim (at
most 12 hours from now), accepts one written form of it, and an operator voids every
session issued before a moment with `--console-sessions-since`.

Tokens are minted here as anyone holding the secret can mint them (the server's own
signing function, given another time). The in-memory store only: sessions are no
store's business."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from hopper.auth.credentials import Credential
from hopper.console import sessions

from .consoles import API, CREDENTIALS, TENANT_A
from .processes import HopperProcess, start_hopper

pytestmark = pytest.mark.slow

KEY = Credential(*TENANT_A)
HOUR = 3600
# Sessions issued before this point (relative to the server's start) are revoked.
REVOKED_BEFORE = -50


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HopperProcess]:
    scratch = tmp_path_factory.mktemp("sessions")
    keys = scratch / "credentials.toml"
    keys.write_text(CREDENTIALS)
    since = int(time.time()) + REVOKED_BEFORE
    hopper = start_hopper("--auth", "sigv4", "--credentials-file", str(keys),
                          "--console-sessions-since", str(since), log=scratch / "hopper.log")
    try:
        yield hopper
    finally:
        assert hopper.stop() == 0, hopper.output()


def _accepted(server: HopperProcess, token: str) -> bool:
    answer = httpx.get(f"{server.url}{API}/queues", headers={"authorization": f"Bearer {token}"})
    assert answer.status_code in (200, 401), answer.text
    return answer.status_code == 200


def _minted(issued_at: float) -> str:
    token, _ = sessions.issue(KEY, issued_at)
    return token


def test_a_session_signed_in_now_is_accepted(server):
    answer = httpx.post(f"{server.url}{API}/session",
                        json={"access_key": TENANT_A[0], "secret_key": TENANT_A[1]})
    assert answer.status_code == 200
    assert _accepted(server, answer.json()["token"])
    assert _accepted(server, _minted(time.time() - 10))


def test_a_token_minted_to_live_for_years_is_refused(server):
    assert not _accepted(server, _minted(time.time() + 5 * 365 * 24 * HOUR))
    assert not _accepted(server, _minted(time.time() + HOUR))


def test_an_expiry_with_leading_zeros_is_not_the_same_token(server):
    key, expires, mac = _minted(time.time() - 10).split(".")
    assert not _accepted(server, f"{key}.0{expires}.{mac}")
    assert not _accepted(server, f"{key}.000{expires}.{mac}")


def test_sessions_issued_before_the_revocation_are_void(server):
    assert not _accepted(server, _minted(time.time() + REVOKED_BEFORE - 60))
    assert not _accepted(server, _minted(time.time() - 13 * HOUR))  # expired anyway


def test_a_session_lives_at_most_its_lifetime_from_now():
    signed = sessions.Sessions({KEY.access_key: KEY})
    now = 1_800_000_000.0
    assert sessions.verify(signed, _minted(now), now) == KEY
    assert sessions.verify(signed, _minted(now), now + sessions.LIFETIME_SECONDS) == KEY
    assert sessions.verify(signed, _minted(now), now + sessions.LIFETIME_SECONDS + 1) is None
    # another worker's clock a little ahead: still its session
    assert sessions.verify(signed, _minted(now + 30), now) == KEY
    assert sessions.verify(signed, _minted(now + 24 * HOUR), now) is None

