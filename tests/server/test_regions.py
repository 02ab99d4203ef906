"""Queues are per region (issue 17, item 4), on both protocols and both stores: the
region is the request's SigV4 credential scope's (read with auth off too), the
server's own region (us-east-1 here) keeps the short URL form, other regions' URLs
and ARNs name their region, and either form reaches the right queue."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from .protocols import Caller

HOME = "us-east-1"
AWAY = "eu-central-1"


@pytest.fixture(params=["json", "query"])
def clients(request: pytest.FixtureRequest, endpoint: str) -> Iterator[tuple[Caller, Caller]]:
    """Callers of one protocol signing for the server's region and for another."""
    home, away = Caller(request.param, endpoint, HOME), Caller(request.param, endpoint, AWAY)
    yield home, away
    home.close()
    away.close()


def unique() -> str:
    return f"region-{uuid.uuid4().hex[:8]}"


def queue_url(caller: Caller, name: str) -> str:
    answer = caller("CreateQueue", QueueName=name)
    assert answer.status == 200, answer
    return str(answer.value("QueueUrl"))


def listed_urls(caller: Caller, prefix: str) -> list[str]:
    answer = caller("ListQueues", QueueNamePrefix=prefix)
    if caller.protocol == "json":
        return list((answer.body or {}).get("QueueUrls", []))
    urls = (answer.body or {}).get("QueueUrl", [])
    return urls if isinstance(urls, list) else [urls]


def test_one_name_in_two_regions_is_two_queues_with_their_own_urls(clients):
    home, away = clients
    name = unique()
    home_url, away_url = queue_url(home, name), queue_url(away, name)
    assert urlsplit(home_url).path == f"/000000000000/{name}"
    assert urlsplit(away_url).path == f"/{AWAY}/000000000000/{name}"
    assert home("GetQueueUrl", QueueName=name).value("QueueUrl") == home_url
    assert away("GetQueueUrl", QueueName=name).value("QueueUrl") == away_url
    assert listed_urls(home, name) == [home_url]
    assert listed_urls(away, name) == [away_url]


def test_a_message_sent_in_one_region_is_not_received_in_the_other(clients):
    home, away = clients
    name = unique()
    home_url, away_url = queue_url(home, name), queue_url(away, name)
    away("SendMessage", QueueUrl=away_url, MessageBody="away")
    assert home("ReceiveMessage", QueueUrl=home_url).messages() == []
    (message,) = away("ReceiveMessage", QueueUrl=away_url).messages()
    assert message["Body"] == "away"


def test_a_queue_only_in_another_region_does_not_exist_here(clients):
    home, away = clients
    name = unique()
    queue_url(away, name)
    answer = home("GetQueueUrl", QueueName=name)
    assert answer.code == "AWS.SimpleQueueService.NonExistentQueue"


def test_either_url_form_reaches_its_queue_whatever_region_signed(clients):
    home, away = clients
    name = unique()
    home_url, away_url = queue_url(home, name), queue_url(away, name)
    # A URL that names its region reaches that region's queue from any client ...
    home("SendMessage", QueueUrl=away_url, MessageBody="to away")
    (message,) = away("ReceiveMessage", QueueUrl=away_url).messages()
    assert message["Body"] == "to away"
    # ... the short form is the server's own region, and naming that region works too.
    away("SendMessage", QueueUrl=home_url, MessageBody="to home")
    long_home = home_url.replace("/000000000000/", f"/{HOME}/000000000000/")
    (message,) = home("ReceiveMessage", QueueUrl=long_home).messages()
    assert message["Body"] == "to home"


def test_a_bare_name_resolves_in_the_callers_region(clients):
    home, away = clients
    name = unique()
    queue_url(home, name)
    away_url = queue_url(away, name)
    away("SendMessage", QueueUrl=name, MessageBody="by name")
    (message,) = away("ReceiveMessage", QueueUrl=away_url).messages()
    assert message["Body"] == "by name"


def test_a_queue_arn_names_its_region(clients):
    home, away = clients
    name = unique()
    for caller, region in ((home, HOME), (away, AWAY)):
        url = queue_url(caller, name)
        answer = caller("GetQueueAttributes", QueueUrl=url, AttributeNames=["QueueArn"])
        assert answer.attributes()["QueueArn"] == f"arn:aws:sqs:{region}:000000000000:{name}"


def test_a_dead_letter_queue_of_another_region_is_found_by_its_arn(clients):
    _, away = clients
    dlq = queue_url(away, unique())
    arn = away("GetQueueAttributes", QueueUrl=dlq, AttributeNames=["QueueArn"]).attributes()[
        "QueueArn"
    ]
    source = queue_url(away, unique())
    policy = f'{{"deadLetterTargetArn":"{arn}","maxReceiveCount":1}}'
    answer = away("SetQueueAttributes", QueueUrl=source, Attributes={"RedrivePolicy": policy})
    assert answer.status == 200, answer
    got = away("GetQueueAttributes", QueueUrl=source, AttributeNames=["RedrivePolicy"])
    assert arn in got.attributes()["RedrivePolicy"]


def test_a_redrive_allow_policy_names_its_sources_by_their_regions_arns(clients):
    _, away = clients
    dlq = queue_url(away, unique())
    source_url = queue_url(away, unique())

    def arn(caller: Caller, url: str) -> str:
        answer = caller("GetQueueAttributes", QueueUrl=url, AttributeNames=["QueueArn"])
        return str(answer.attributes()["QueueArn"])

    allow = f'{{"redrivePermission":"byQueue","sourceQueueArns":["{arn(away, source_url)}"]}}'
    answer = away("SetQueueAttributes", QueueUrl=dlq, Attributes={"RedriveAllowPolicy": allow})
    assert answer.status == 200, answer
    policy = f'{{"deadLetterTargetArn":"{arn(away, dlq)}","maxReceiveCount":1}}'
    answer = away("SetQueueAttributes", QueueUrl=source_url, Attributes={"RedrivePolicy": policy})
    assert answer.status == 200, answer
