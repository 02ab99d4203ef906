"""SNS topics through boto3 against a live hopper on each store: create, list, delete,
attributes, permissions, tags, and the routing that keeps SNS and SQS apart."""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError

from .sns_clients import sns_client, sqs_in, unique

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def sns(endpoint: str):
    return sns_client(endpoint)


def error_of(call, **params) -> tuple[int, str, str]:
    with pytest.raises(ClientError) as caught:
        call(**params)
    response = caught.value.response
    return (response["ResponseMetadata"]["HTTPStatusCode"], response["Error"]["Code"],
            response["Error"]["Message"])


def test_create_topic_is_idempotent_and_refuses_other_attributes(sns) -> None:
    name = unique("t")
    arn = sns.create_topic(Name=name, Attributes={"DisplayName": "d"})["TopicArn"]
    assert arn == f"arn:aws:sns:us-east-1:000000000000:{name}"
    assert sns.create_topic(Name=name, Attributes={"DisplayName": "d"})["TopicArn"] == arn
    assert sns.create_topic(Name=name)["TopicArn"] == arn
    assert error_of(sns.create_topic, Name=name, Attributes={"DisplayName": "e"}) == (
        400, "InvalidParameter",
        "Invalid parameter: Attributes Reason: Topic already exists with different attributes",
    )


@pytest.mark.parametrize("name", ["", "a" * 257, "with space", "dot.ted", "x.fifo"])
def test_topic_names_outside_the_rules_are_refused(sns, name: str) -> None:
    assert error_of(sns.create_topic, Name=name)[:2] == (400, "InvalidParameter")


def test_topic_names_at_the_length_limit_are_accepted(sns) -> None:
    name = unique("n")
    arn = sns.create_topic(Name=name + "a" * (256 - len(name)))["TopicArn"]
    fifo = name + "a" * (251 - len(name)) + ".fifo"
    assert sns.create_topic(Name=fifo, Attributes={"FifoTopic": "true"})["TopicArn"]
    sns.delete_topic(TopicArn=arn)


def test_delete_topic_removes_it_and_repeats_succeed(sns) -> None:
    arn = sns.create_topic(Name=unique("t"))["TopicArn"]
    sns.delete_topic(TopicArn=arn)
    sns.delete_topic(TopicArn=arn)
    assert error_of(sns.get_topic_attributes, TopicArn=arn) == (
        404, "NotFound", "Topic does not exist"
    )


def test_list_topics_pages_by_100_in_the_callers_region(endpoint: str) -> None:
    region = "ap-south-2"  # a region no other test uses
    sns = sns_client(endpoint, region)
    arns = sorted(sns.create_topic(Name=f"p{n:03d}")["TopicArn"] for n in range(101))
    first = sns.list_topics()
    assert len(first["Topics"]) == 100 and "NextToken" in first
    second = sns.list_topics(NextToken=first["NextToken"])
    assert "NextToken" not in second
    listed = [t["TopicArn"] for t in first["Topics"] + second["Topics"]]
    assert listed == arns
    assert all(arn.startswith(f"arn:aws:sns:{region}:") for arn in listed)
    for arn in arns:
        sns.delete_topic(TopicArn=arn)


def test_get_topic_attributes_shows_aws_defaults(sns) -> None:
    arn = sns.create_topic(Name=unique("t"))["TopicArn"]
    attributes = sns.get_topic_attributes(TopicArn=arn)["Attributes"]
    assert attributes["TopicArn"] == arn and attributes["Owner"] == "000000000000"
    assert attributes["DisplayName"] == ""
    assert attributes["SubscriptionsConfirmed"] == "0"
    assert json.loads(attributes["Policy"])["Statement"][0]["Resource"] == arn
    assert "http" in json.loads(attributes["EffectiveDeliveryPolicy"])


@pytest.mark.parametrize(("name", "value"), [
    ("DisplayName", "shown"),
    ("Policy", json.dumps({"Version": "2012-10-17", "Statement": []})),
    ("DeliveryPolicy", json.dumps({"http": {"defaultHealthyRetryPolicy": {"numRetries": 5}}})),
    ("KmsMasterKeyId", "alias/aws/sns"),
    ("SignatureVersion", "2"),
    ("TracingConfig", "Active"),
])
def test_set_topic_attributes_are_shown_back(sns, name: str, value: str) -> None:
    arn = sns.create_topic(Name=unique("t"))["TopicArn"]
    sns.set_topic_attributes(TopicArn=arn, AttributeName=name, AttributeValue=value)
    assert sns.get_topic_attributes(TopicArn=arn)["Attributes"][name] == value


@pytest.mark.parametrize(("name", "value"), [
    ("Unknown", "x"), ("SignatureVersion", "3"), ("TracingConfig", "On"),
    ("Policy", "not json"), ("DeliveryPolicy", json.dumps({"healthyRetryPolicy":
                                                           {"numRetries": 101}})),
    ("FifoTopic", "true"), ("ContentBasedDeduplication", "true"),
])
def test_set_topic_attributes_refuses_what_sns_refuses(sns, name: str, value: str) -> None:
    arn = sns.create_topic(Name=unique("t"))["TopicArn"]
    assert error_of(sns.set_topic_attributes, TopicArn=arn, AttributeName=name,
                    AttributeValue=value)[:2] == (400, "InvalidParameter")


def test_fifo_topics_show_their_attributes(sns) -> None:
    arn = sns.create_topic(Name=unique("f") + ".fifo",
                           Attributes={"FifoTopic": "true",
                                       "ContentBasedDeduplication": "true"})["TopicArn"]
    attributes = sns.get_topic_attributes(TopicArn=arn)["Attributes"]
    assert (attributes["FifoTopic"], attributes["ContentBasedDeduplication"]) == ("true", "true")


def test_permissions_are_statements_of_the_topic_policy(sns) -> None:
    arn = sns.create_topic(Name=unique("t"))["TopicArn"]
    sns.add_permission(TopicArn=arn, Label="friends", AWSAccountId=["111122223333"],
                       ActionName=["Publish"])
    policy = json.loads(sns.get_topic_attributes(TopicArn=arn)["Attributes"]["Policy"])
    [statement] = [s for s in policy["Statement"] if s["Sid"] == "friends"]
    assert statement["Action"] == ["SNS:Publish"]
    assert statement["Principal"] == {"AWS": "arn:aws:iam::111122223333:root"}
    assert error_of(sns.add_permission, TopicArn=arn, Label="friends",
                    AWSAccountId=["1"], ActionName=["Publish"]) == (
        400, "InvalidParameter", "Invalid parameter: Statement already exists")
    sns.remove_permission(TopicArn=arn, Label="friends")
    policy = json.loads(sns.get_topic_attributes(TopicArn=arn)["Attributes"]["Policy"])
    assert all(s["Sid"] != "friends" for s in policy["Statement"])


def test_sqs_permissions_on_the_same_endpoint_stay_sqs(endpoint: str, sns) -> None:
    sqs = sqs_in(endpoint)
    url = sqs.create_queue(QueueName=unique("q"))["QueueUrl"]
    sqs.add_permission(QueueUrl=url, Label="friends", AWSAccountIds=["111122223333"],
                       Actions=["SendMessage"])
    policy = json.loads(sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["Policy"])
                        ["Attributes"]["Policy"])
    assert policy["Statement"][0]["Sid"] == "friends"
    sqs.remove_permission(QueueUrl=url, Label="friends")


def test_tags_are_added_listed_and_removed(sns) -> None:
    arn = sns.create_topic(Name=unique("t"), Tags=[{"Key": "a", "Value": "1"}])["TopicArn"]
    sns.tag_resource(ResourceArn=arn, Tags=[{"Key": "b", "Value": "2"}])
    tags = sns.list_tags_for_resource(ResourceArn=arn)["Tags"]
    assert sorted((t["Key"], t["Value"]) for t in tags) == [("a", "1"), ("b", "2")]
    sns.untag_resource(ResourceArn=arn, TagKeys=["a"])
    assert sns.list_tags_for_resource(ResourceArn=arn)["Tags"] == [{"Key": "b", "Value": "2"}]


def test_fifty_tags_are_allowed_and_the_fifty_first_refused(sns) -> None:
    arn = sns.create_topic(Name=unique("t"))["TopicArn"]
    sns.tag_resource(ResourceArn=arn, Tags=[{"Key": f"k{n}", "Value": "v"} for n in range(50)])
    assert error_of(sns.tag_resource, ResourceArn=arn, Tags=[{"Key": "one", "Value": "more"}])[
        :2] == (400, "TagLimitExceeded")


def test_tag_actions_on_a_missing_topic_are_resource_not_found(sns) -> None:
    arn = "arn:aws:sns:us-east-1:000000000000:" + unique("gone")
    assert error_of(sns.list_tags_for_resource, ResourceArn=arn)[:2] == (404, "ResourceNotFound")
    assert error_of(sns.tag_resource, ResourceArn=arn,
                    Tags=[{"Key": "a", "Value": "b"}])[:2] == (404, "ResourceNotFound")


def test_topics_are_per_region(endpoint: str) -> None:
    name = unique("t")
    east = sns_client(endpoint, "us-east-1").create_topic(Name=name)["TopicArn"]
    west = sns_client(endpoint, "eu-west-1").create_topic(Name=name)["TopicArn"]
    assert east != west and west.startswith("arn:aws:sns:eu-west-1:")
    listed = [t["TopicArn"] for t in sns_client(endpoint, "eu-west-1").list_topics()["Topics"]]
    assert west in listed and east not in listed
