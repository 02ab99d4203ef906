"""The SigV4 verifier against botocore's own signer, on the inputs where canonical
forms go wrong: encoded paths, repeated and unsorted query keys, spaces and reserved
characters, folded header whitespace, the Date header, presigned URLs; and the
verifier's refusals at the edges of its 15-minute window."""

from __future__ import annotations

import datetime
import time
from urllib.parse import urlsplit

import botocore.auth
import pytest
from botocore.auth import SigV4Auth, SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from hopper.auth.credentials import Credential, CredentialsError, parse_environment
from hopper.auth.sigv4 import Arrival, canonical_uri, verify
from hopper.wire.errors import SqsError

KEYS = {"AKIDA": Credential("AKIDA", "secret-a", "111111111111")}
NOW = 1_700_000_000.0


@pytest.fixture(autouse=True)
def fixed_signing_time(monkeypatch: pytest.MonkeyPatch) -> None:
    moment = datetime.datetime.fromtimestamp(NOW, datetime.UTC).replace(tzinfo=None)
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda *_a, **_k: moment)


def arrival_of(request: AWSRequest, extra_headers: dict[str, str] | None = None) -> Arrival:
    prepared = request.prepare()
    parts = urlsplit(prepared.url)
    headers = [(k.lower(), v) for k, v in prepared.headers.items()]
    headers.append(("host", parts.netloc))
    for name, value in (extra_headers or {}).items():
        headers.append((name, value))
    body = prepared.body or b""
    return Arrival(
        prepared.method, parts.path or "/", parts.query, headers,
        body.encode() if isinstance(body, str) else body,
    )


def signed(method: str, url: str, body: bytes = b"", headers=None, secret="secret-a"):
    request = AWSRequest(method=method, url=url, data=body, headers=headers or {})
    SigV4Auth(Credentials("AKIDA", secret), "sqs", "us-west-2").add_auth(request)
    return request


@pytest.mark.parametrize(
    "url",
    [
        "http://h:9324/",
        "http://h:9324/111111111111/queue-name",
        "http://h:9324/111111111111/with%20space",
        "http://h:9324/a/./b/../c//d/",
        "http://h:9324/?Action=ListQueues&Version=2012-11-05",
        "http://h:9324/?b=2&a=1&a=0&c=",
        "http://h:9324/?MessageBody=caf%C3%A9%20%26%3D%2B%2F~",
    ],
)
def test_botocore_signatures_verify(url):
    assert verify(arrival_of(signed("GET", url)), KEYS, NOW).account_id == "111111111111"


def test_a_form_body_is_hashed_as_sent():
    body = b"Action=SendMessage&MessageBody=a+b%20c&Version=2012-11-05"
    request = signed("POST", "http://h/", body,
                     {"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"})
    assert verify(arrival_of(request), KEYS, NOW).account_id == "111111111111"
    tampered = arrival_of(request)
    forged = Arrival(tampered.method, tampered.path, tampered.query, tampered.headers,
                     body.replace(b"a+b", b"a+c"))
    with pytest.raises(SqsError) as raised:
        verify(forged, KEYS, NOW)
    assert raised.value.name == "SignatureDoesNotMatch"


def test_header_values_are_compared_with_whitespace_folded():
    request = signed("POST", "http://h/", b"{}", {"X-Amz-Target": "AmazonSQS.ListQueues"})
    arrival = arrival_of(request)
    spaced = [(k, f"  {v}  ") if k == "x-amz-target" else (k, v)
              for k, v in arrival.headers]
    verified = verify(
        Arrival(arrival.method, arrival.path, arrival.query, spaced, arrival.body), KEYS, NOW
    )
    assert verified.account_id == "111111111111"


def test_a_signed_header_changed_in_transit_does_not_match():
    request = signed("POST", "http://h/", b"{}", {"X-Amz-Target": "AmazonSQS.ListQueues"})
    arrival = arrival_of(request)
    changed = [(k, "AmazonSQS.DeleteQueue") if k == "x-amz-target" else (k, v)
               for k, v in arrival.headers]
    with pytest.raises(SqsError) as raised:
        verify(Arrival(arrival.method, arrival.path, arrival.query, changed, arrival.body),
               KEYS, NOW)
    assert raised.value.name == "SignatureDoesNotMatch"


def test_a_request_dated_with_the_date_header_verifies():
    request = signed("GET", "http://h/?Action=ListQueues", headers={"Date": "x"})
    assert verify(arrival_of(request), KEYS, NOW).account_id == "111111111111"


def test_a_presigned_url_verifies_until_it_expires():
    request = AWSRequest(method="GET", url="http://h/", params={"Action": "ListQueues"})
    SigV4QueryAuth(Credentials("AKIDA", "secret-a"), "sqs", "us-east-1", 60).add_auth(request)
    arrival = arrival_of(request)
    assert verify(arrival, KEYS, NOW + 60).account_id == "111111111111"
    with pytest.raises(SqsError) as raised:
        verify(arrival, KEYS, NOW + 61)
    assert raised.value.name == "RequestExpired"


@pytest.mark.parametrize(
    ("offset", "refusal"),
    [(-900.0, None), (-901.0, "Signature expired"), (900.0, None), (901.0, "not yet current")],
)
def test_the_window_is_15_minutes_each_way(offset, refusal):
    arrival = arrival_of(signed("GET", "http://h/"))
    now = NOW - offset  # the request was signed `offset` seconds from the server's now
    if refusal is None:
        assert verify(arrival, KEYS, now).account_id == "111111111111"
        return
    with pytest.raises(SqsError) as raised:
        verify(arrival, KEYS, now)
    assert raised.value.name == "SignatureDoesNotMatch"
    assert refusal in raised.value.message


@pytest.mark.parametrize(
    ("authorization", "name"),
    [
        ("AWS4-HMAC-SHA256 Credential=AKIDA/20231114/us-east-1/sqs/aws4_request",
         "IncompleteSignature"),
        ("AWS AKIDA:abc", "IncompleteSignature"),
        ("AWS4-HMAC-SHA256 Credential=AKIDA/20231114/us-east-1/sqs, SignedHeaders=host, "
         "Signature=00", "IncompleteSignature"),
        ("AWS4-HMAC-SHA256 Credential=AKIDA/20231114/us-east-1/sns/aws4_request, "
         "SignedHeaders=host, Signature=00", "SignatureDoesNotMatch"),
        ("AWS4-HMAC-SHA256 Credential=AKIDA/20231113/us-east-1/sqs/aws4_request, "
         "SignedHeaders=host, Signature=00", "SignatureDoesNotMatch"),
        ("AWS4-HMAC-SHA256 Credential=AKIDB/20231114/us-east-1/sqs/aws4_request, "
         "SignedHeaders=host, Signature=00", "InvalidClientTokenId"),
    ],
)
def test_malformed_or_misdirected_signatures_are_refused(authorization, name):
    amz_date = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(NOW))
    arrival = Arrival("GET", "/", "", [("host", "h"), ("x-amz-date", amz_date),
                                       ("authorization", authorization)], b"")
    with pytest.raises(SqsError) as raised:
        verify(arrival, KEYS, NOW)
    assert raised.value.name == name


def test_no_signature_is_missing_authentication_token():
    with pytest.raises(SqsError) as raised:
        verify(Arrival("GET", "/", "Action=ListQueues", [("host", "h")], b""), KEYS, NOW)
    assert raised.value.name == "MissingAuthenticationToken"


def test_the_canonical_uri_is_encoded_twice_with_dot_segments_removed():
    assert canonical_uri("/a%20b/./c/../d") == "/a%2520b/d"
    assert canonical_uri("") == "/"


def test_credentials_from_the_environment():
    keys = parse_environment("AKIDA:secret-a:111111111111, AKIDB:secret-b:222222222222")
    assert keys["AKIDB"].account_id == "222222222222"
    assert "secret" not in repr(keys["AKIDA"])
    for bad in ("AKIDA:secret", "AKIDA:secret:123", "AKIDA:s:111111111111,AKIDA:t:111111111111"):
        with pytest.raises(CredentialsError):
            parse_environment(bad)


@pytest.mark.parametrize("expires", ["%C2%B2", "9" * 5_000, "-1"])  # %C2%B2: "²"
def test_a_presigned_expiry_that_is_no_count_of_seconds_is_an_incomplete_signature(expires):
    request = AWSRequest(method="GET", url="http://h/", params={"Action": "ListQueues"})
    SigV4QueryAuth(Credentials("AKIDA", "secret-a"), "sqs", "us-east-1", 60).add_auth(request)
    arrival = arrival_of(request)
    query = arrival.query.replace("X-Amz-Expires=60", f"X-Amz-Expires={expires}")
    assert query != arrival.query
    with pytest.raises(SqsError) as raised:
        verify(Arrival(arrival.method, arrival.path, query, arrival.headers, arrival.body),
               KEYS, NOW)
    assert raised.value.name == "IncompleteSignature"
