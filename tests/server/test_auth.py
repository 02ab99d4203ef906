"""`--auth sigv4` on a live server: real boto3 and botocore signing (header and
presigned query signatures, both protocols), AWS's errors for unknown keys, wrong
secrets, missing and stale signatures, and tenants kept apart by their accounts."""

from __future__ import annotations

import datetime
import json
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import boto3
import botocore
import botocore.auth
import httpx
import pytest
from botocore.auth import SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials
from botocore.exceptions import ClientError

from .conftest import STORES, store_options
from .processes import (
    HopperProcess,
    free_port,
    server_environment,
    start_hopper,
    wait_until_healthy,
)
from .query_client import API_VERSION, QueryClient, parse_xml, path_of

TENANT_A = ("AKIDTENANTA", "secret-of-tenant-a", "111111111111")
TENANT_B = ("AKIDTENANTB", "secret-of-tenant-b", "222222222222")

CREDENTIALS = "\n".join(
    f'[[credentials]]\naccess_key = "{key}"\nsecret_key = "{secret}"\naccount_id = "{account}"\n'
    for key, secret, account in (TENANT_A, TENANT_B)
)


@pytest.fixture(scope="module", params=STORES)
def auth_endpoint(request: pytest.FixtureRequest) -> Iterator[str]:
    with tempfile.TemporaryDirectory() as scratch, store_options(request.param) as options:
        keys = Path(scratch) / "credentials.toml"
        keys.write_text(CREDENTIALS)
        server = start_hopper(
            *options, "--relaxed-timing", "--auth", "sigv4", "--credentials-file", str(keys),
            log=Path(scratch) / "hopper.log",
        )
        try:
            yield server.url
        finally:
            assert server.stop() == 0, server.output()


def client(endpoint: str, access_key: str, secret_key: str, **config: object):
    return boto3.client(
        "sqs", endpoint_url=endpoint, region_name="us-east-1",
        aws_access_key_id=access_key, aws_secret_access_key=secret_key,
        config=Config(retries={"total_max_attempts": 1}, **config),  # type: ignore[arg-type]
    )


def tenant(endpoint: str, who: tuple[str, str, str]):
    return client(endpoint, who[0], who[1])


def unique(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


def error_of(call, *args, **kwargs) -> tuple[str, int, str]:
    with pytest.raises(ClientError) as raised:
        call(*args, **kwargs)
    response = raised.value.response
    return (
        response["Error"]["Code"],
        response["ResponseMetadata"]["HTTPStatusCode"],
        response["Error"]["Message"],
    )


@pytest.fixture
def signed_at(monkeypatch: pytest.MonkeyPatch):
    """Sign with botocore as if its clock were off by `offset` seconds: botocore reads
    the time through botocore.auth.get_current_datetime when it signs."""

    def shift(offset: float) -> None:
        moment = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
        fixed = moment + datetime.timedelta(seconds=offset)
        monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda *_a, **_k: fixed)

    return shift


# --- signed requests -------------------------------------------------------------------


def test_a_signed_client_acts_for_the_account_of_its_access_key(auth_endpoint):
    sqs = tenant(auth_endpoint, TENANT_A)
    url = sqs.create_queue(QueueName=unique("mine"))["QueueUrl"]
    assert path_of(url).startswith("/111111111111/")
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]
    assert arn["QueueArn"].split(":")[4] == "111111111111"
    sqs.send_message(QueueUrl=url, MessageBody="hello, with a signature")
    [message] = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1)["Messages"]
    assert message["Body"] == "hello, with a signature"


def test_an_unknown_access_key_is_invalid_client_token_id(auth_endpoint):
    sqs = client(auth_endpoint, "AKIDNOBODY", "whatever")
    code, status, message = error_of(sqs.list_queues)
    assert (code, status) == ("InvalidClientTokenId", 403)
    assert message == "The security token included in the request is invalid."


def test_a_wrong_secret_is_signature_does_not_match(auth_endpoint):
    sqs = client(auth_endpoint, TENANT_A[0], "not-the-secret")
    code, status, message = error_of(sqs.list_queues)
    assert (code, status) == ("SignatureDoesNotMatch", 403)
    assert message.startswith("The request signature we calculated does not match")


def test_an_unsigned_request_is_missing_authentication_token(auth_endpoint):
    sqs = client(auth_endpoint, "x", "x", signature_version=botocore.UNSIGNED)
    code, status, _ = error_of(sqs.list_queues)
    assert (code, status) == ("MissingAuthenticationToken", 403)


def test_another_tenants_key_with_this_tenants_secret_does_not_match(auth_endpoint):
    sqs = client(auth_endpoint, TENANT_B[0], TENANT_A[1])
    assert error_of(sqs.list_queues)[0] == "SignatureDoesNotMatch"


# --- the 15-minute window --------------------------------------------------------------


def test_a_signature_up_to_15_minutes_old_is_accepted(auth_endpoint, signed_at):
    signed_at(-(15 * 60 - 10))  # 10 s inside the window, for the request's own travel
    answer = tenant(auth_endpoint, TENANT_A).list_queues()
    assert answer["ResponseMetadata"]["HTTPStatusCode"] == 200


def test_a_signature_older_than_15_minutes_has_expired(auth_endpoint, signed_at):
    signed_at(-(15 * 60 + 10))
    code, status, message = error_of(tenant(auth_endpoint, TENANT_A).list_queues)
    assert (code, status) == ("SignatureDoesNotMatch", 403)
    assert message.startswith("Signature expired: ")
    assert message.endswith(" - 15 min.)")


def test_a_signature_up_to_15_minutes_ahead_is_accepted(auth_endpoint, signed_at):
    signed_at(15 * 60 - 10)
    answer = tenant(auth_endpoint, TENANT_A).list_queues()
    assert answer["ResponseMetadata"]["HTTPStatusCode"] == 200


def test_a_signature_more_than_15_minutes_ahead_is_not_yet_current(auth_endpoint, signed_at):
    signed_at(15 * 60 + 10)
    code, status, message = error_of(tenant(auth_endpoint, TENANT_A).list_queues)
    assert (code, status) == ("SignatureDoesNotMatch", 403)
    assert message.startswith("Signature not yet current: ")


# --- the query protocol -----------------------------------------------------------------


def test_query_protocol_post_and_get_on_a_queue_url_are_verified(auth_endpoint):
    with QueryClient(auth_endpoint, access_key=TENANT_A[0], secret_key=TENANT_A[1]) as query:
        created = query.call("CreateQueue", {"QueueName": unique("query-auth")})
        assert created.status == 200, created.text
        url = created.result["QueueUrl"]
        assert path_of(url).startswith("/111111111111/")
        # A GET signed in its header, on the queue's own URL, with a space in a value.
        sent = query.call(
            "SendMessage", {"MessageBody": "a body with spaces & symbols=/+"},
            method="GET", path=path_of(url),
        )
        assert sent.status == 200, sent.text
        received = query.call("ReceiveMessage", {}, path=path_of(url))
        assert received.result["Message"]["Body"] == "a body with spaces & symbols=/+"


@pytest.mark.parametrize(
    ("who", "code"),
    [
        (("AKIDNOBODY", "x"), "InvalidClientTokenId"),
        ((TENANT_A[0], "wrong"), "SignatureDoesNotMatch"),
    ],
)
def test_query_protocol_auth_errors_are_xml_sender_faults(auth_endpoint, who, code):
    with QueryClient(auth_endpoint, access_key=who[0], secret_key=who[1]) as query:
        answer = query.call("ListQueues", {})
    assert answer.status == 403
    assert answer.error is not None
    assert (answer.error["Type"], answer.error["Code"]) == ("Sender", code)


def test_query_protocol_without_a_signature_is_missing_authentication_token(auth_endpoint):
    with QueryClient(auth_endpoint) as query:
        answer = query.call("ListQueues", {}, signed=False)
    assert answer.status == 403
    assert answer.error is not None and answer.error["Code"] == "MissingAuthenticationToken"


def test_a_body_changed_after_signing_does_not_match(auth_endpoint):
    with QueryClient(auth_endpoint, access_key=TENANT_A[0], secret_key=TENANT_A[1]) as query:
        request = query.build("ListQueues", {"QueueNamePrefix": "a"})
        forged = httpx.Request(
            "POST", request.url, headers=request.headers,
            content=request.content.replace(b"QueueNamePrefix=a", b"QueueNamePrefix=b"),
        )
        answer = query.http.send(forged)
    assert answer.status_code == 403
    assert "<Code>SignatureDoesNotMatch</Code>" in answer.text


# --- presigned URLs ---------------------------------------------------------------------


def presigned_url(endpoint: str, who: tuple[str, str, str], params: dict[str, str], expires: int):
    request = AWSRequest(
        method="GET", url=endpoint + "/",
        params={"Action": "ListQueues", "Version": API_VERSION, **params},
    )
    SigV4QueryAuth(Credentials(who[0], who[1]), "sqs", "us-east-1", expires).add_auth(request)
    return request.prepare().url


def test_a_presigned_url_is_accepted_until_it_expires(auth_endpoint, signed_at):
    name = unique("presigned")
    tenant(auth_endpoint, TENANT_A).create_queue(QueueName=name)
    fresh = httpx.get(presigned_url(auth_endpoint, TENANT_A, {"QueueNamePrefix": name}, 60))
    assert fresh.status_code == 200, fresh.text
    assert name in fresh.text
    # Signed 30 minutes ago to last an hour: still good (past the 15-minute window).
    signed_at(-30 * 60)
    lasting = httpx.get(presigned_url(auth_endpoint, TENANT_A, {}, 3600))
    assert lasting.status_code == 200, lasting.text
    # Signed two minutes ago to last one minute: expired.
    signed_at(-120)
    stale = httpx.get(presigned_url(auth_endpoint, TENANT_A, {}, 60))
    assert stale.status_code == 400
    error = (parse_xml(stale.text) or {})["ErrorResponse"]["Error"]
    assert (error["Code"], error["Message"]) == ("RequestExpired", "Request has expired.")


def test_a_presigned_url_with_a_changed_parameter_does_not_match(auth_endpoint):
    url = presigned_url(auth_endpoint, TENANT_A, {"QueueNamePrefix": "a"}, 60)
    answer = httpx.get(url.replace("QueueNamePrefix=a", "QueueNamePrefix=b"))
    assert answer.status_code == 403
    assert "<Code>SignatureDoesNotMatch</Code>" in answer.text


def test_a_presigned_plus_sign_changed_to_a_form_space_does_not_match(auth_endpoint):
    # given a presigned SendMessage of "pay+100" (the URL carries pay%2B100)
    queue_url = tenant(auth_endpoint, TENANT_A).create_queue(QueueName=unique("pay"))["QueueUrl"]
    url = presigned_url(auth_endpoint, TENANT_A, {
        "Action": "SendMessage", "QueueUrl": queue_url, "MessageBody": "pay+100",
    }, 60)
    assert "MessageBody=pay%2B100" in url
    # when the URL is rewritten to carry pay+100, which a form reads as "pay 100"
    altered = httpx.get(url.replace("pay%2B100", "pay+100"))
    # then the signature does not cover it, and nothing was sent
    assert altered.status_code == 403
    assert "<Code>SignatureDoesNotMatch</Code>" in altered.text
    a = tenant(auth_endpoint, TENANT_A)
    assert "Messages" not in a.receive_message(QueueUrl=queue_url)
    # while the URL as signed sends "pay+100"
    assert httpx.get(url).status_code == 200
    [message] = a.receive_message(QueueUrl=queue_url)["Messages"]
    assert message["Body"] == "pay+100"


@pytest.mark.parametrize("unsigned", ["X-Amz-Target", "Content-Type"])
def test_a_signature_that_leaves_out_the_target_or_content_type_is_refused(
    auth_endpoint, unsigned
):
    # given a JSON request whose signature covers host and x-amz-date alone, then headers
    # added after signing (a captured request's action changed)
    headers = {"X-Amz-Target": "AmazonSQS.ListQueues",
               "Content-Type": "application/x-amz-json-1.0"}
    signed_headers = {"X-Amz-Target", "Content-Type"} - {unsigned}
    request = AWSRequest(method="POST", url=auth_endpoint + "/", data=b"{}",
                         headers={name: headers[name] for name in signed_headers})
    botocore.auth.SigV4Auth(Credentials(TENANT_A[0], TENANT_A[1]), "sqs", "us-east-1").add_auth(
        request
    )
    prepared = request.prepare()
    # when it is sent with the unsigned header as well
    answer = httpx.post(prepared.url, content=prepared.body,
                        headers={**prepared.headers, unsigned: headers[unsigned]})
    # then it is refused, saying what must be signed
    assert answer.status_code == 400
    assert answer.json()["__type"].endswith("IncompleteSignatureException")
    assert f"'{unsigned}' must be a 'SignedHeader'" in answer.json()["message"]


# --- tenants ----------------------------------------------------------------------------


def test_tenants_do_not_see_each_others_queues(auth_endpoint):
    a, b = tenant(auth_endpoint, TENANT_A), tenant(auth_endpoint, TENANT_B)
    name = unique("shared-name")
    url_a = a.create_queue(QueueName=name)["QueueUrl"]
    a.send_message(QueueUrl=url_a, MessageBody="for tenant a")

    assert name not in str(b.list_queues(QueueNamePrefix=name).get("QueueUrls", []))
    assert error_of(b.get_queue_url, QueueName=name)[0] == "AWS.SimpleQueueService.NonExistentQueue"
    assert error_of(
        b.get_queue_url, QueueName=name, QueueOwnerAWSAccountId=TENANT_A[2]
    )[0] == "AWS.SimpleQueueService.NonExistentQueue"
    for call, kwargs in [
        (b.send_message, {"MessageBody": "intruder"}),
        (b.receive_message, {}),
        (b.purge_queue, {}),
        (b.delete_queue, {}),
        (b.get_queue_attributes, {"AttributeNames": ["All"]}),
    ]:
        code = error_of(call, QueueUrl=url_a, **kwargs)[0]
        assert code == "AWS.SimpleQueueService.NonExistentQueue", call

    # The same name is a queue of B's own, with messages of its own.
    url_b = b.create_queue(QueueName=name)["QueueUrl"]
    assert path_of(url_b) == f"/{TENANT_B[2]}/{name}"
    assert "Messages" not in b.receive_message(QueueUrl=url_b)
    [message] = a.receive_message(QueueUrl=url_a, WaitTimeSeconds=1)["Messages"]
    assert message["Body"] == "for tenant a"


def test_a_tenant_cannot_name_another_tenants_queue_by_arn(auth_endpoint):
    a, b = tenant(auth_endpoint, TENANT_A), tenant(auth_endpoint, TENANT_B)
    dead_a = a.create_queue(QueueName=unique("dead"))["QueueUrl"]
    arn_a = a.get_queue_attributes(QueueUrl=dead_a, AttributeNames=["QueueArn"])
    arn = arn_a["Attributes"]["QueueArn"]
    source_b = b.create_queue(QueueName=unique("source"))["QueueUrl"]
    policy = json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 2})
    code, status, message = error_of(
        b.set_queue_attributes, QueueUrl=source_b, Attributes={"RedrivePolicy": policy}
    )
    assert (code, status) == ("InvalidParameterValue", 400)
    assert "Dead letter target does not exist." in message
    assert error_of(b.start_message_move_task, SourceArn=arn)[0] == "ResourceNotFoundException"
    assert error_of(b.list_message_move_tasks, SourceArn=arn)[0] == "ResourceNotFoundException"


# --- start-up -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("credentials", "complaint"),
    [
        (None, "--auth sigv4 needs credentials"),
        ("[[credentials]]\naccess_key = \"AKID\"\n", "needs access_key, secret_key and account_id"),
        ('[[credentials]]\naccess_key = "AKID"\nsecret_key = "s"\naccount_id = "12"\n',
         "is not 12 digits"),
        ("not toml [", "cannot read the credentials file"),
    ],
)
def test_auth_without_usable_credentials_refuses_to_start(tmp_path, credentials, complaint):
    options = ["--auth", "sigv4"]
    if credentials is not None:
        keys = tmp_path / "keys.toml"
        keys.write_text(credentials)
        options += ["--credentials-file", str(keys)]
    done = subprocess.run(
        [sys.executable, "-m", "hopper", "serve", "--port", "0", *options],
        env=server_environment(), capture_output=True, text=True, timeout=30,
    )
    assert done.returncode == 2
    assert complaint in done.stderr
    assert "Traceback" not in done.stderr


def test_credentials_may_come_from_the_environment(tmp_path):
    env = server_environment()
    env["HOPPER_CREDENTIALS"] = ":".join(TENANT_B)
    port = free_port()
    log = tmp_path / "hopper.log"
    with log.open("ab") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "hopper", "serve", "--port", str(port), "--auth", "sigv4"],
            env=env, stdout=output, stderr=subprocess.STDOUT,
        )
    server = HopperProcess(process, f"http://127.0.0.1:{port}", log)
    try:
        wait_until_healthy(process, server.url, log)
        url = tenant(server.url, TENANT_B).create_queue(QueueName="from-env")["QueueUrl"]
        assert path_of(url) == f"/{TENANT_B[2]}/from-env"
        assert error_of(tenant(server.url, TENANT_A).list_queues)[0] == "InvalidClientTokenId"
    finally:
        assert server.stop() == 0, server.output()
