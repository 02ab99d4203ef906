"""Queue URLs parsed once: the same URL from another account or region is parsed for
that caller, not answered from what an earlier caller's parse found."""

from __future__ import annotations

import pytest

from hopper.core.model import QueueKey
from hopper.wire.context import RequestContext
from hopper.wire.errors import SqsError
from hopper.wire.queue_urls import parse_queue_url
from hopper.wire.regions import request_region


def context(account: str = "000000000000", region: str = "us-east-1") -> RequestContext:
    return RequestContext(
        protocol="json", account=account, region=region, base_url="http://h",
        path_queue=None, trace_header=None, request_id="r", home_region="us-east-1",
    )


def test_a_url_parsed_for_its_owner_is_no_queue_for_another_account_asking_next():
    url = "http://h/000000000000/jobs"
    assert parse_queue_url(context(), url) == QueueKey("000000000000", "jobs")
    with pytest.raises(SqsError):
        parse_queue_url(context(account="111111111111"), url)
    assert parse_queue_url(context(), url) == QueueKey("000000000000", "jobs")


def test_a_bare_name_names_the_queue_of_each_callers_own_region():
    assert parse_queue_url(context(), "jobs") == QueueKey("000000000000", "jobs")
    assert parse_queue_url(context(region="eu-west-1"), "jobs") == QueueKey(
        "000000000000:eu-west-1", "jobs"
    )


def test_the_region_of_each_signature_is_its_own_scopes_whatever_came_before():
    def signed(region: str, signature: str) -> dict[str, str]:
        scope = f"AKID/20240101/{region}/sqs/aws4_request"
        return {"authorization": f"AWS4-HMAC-SHA256 Credential={scope}, Signature={signature}"}

    assert request_region(signed("eu-west-1", "1"), b"", "us-east-1") == "eu-west-1"
    assert request_region(signed("eu-west-1", "2"), b"", "us-east-1") == "eu-west-1"
    assert request_region(signed("ap-south-1", "3"), b"", "us-east-1") == "ap-south-1"
    assert request_region({"authorization": "Bearer x"}, b"", "us-east-1") == "us-east-1"
