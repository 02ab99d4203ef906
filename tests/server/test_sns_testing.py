"""hopper.testing serves SNS too: a HopperServer answers boto3's SNS client, `reset()`
deletes topics with the queues, and `sent()` shows what would have gone to the
subscribers hopper does not reach (email, SMS, Lambda, ...)."""

from __future__ import annotations

import pytest

from hopper.testing import HopperServer

from .sns_clients import sns_client

pytestmark = pytest.mark.slow


def test_a_hopper_server_serves_sns_records_other_protocols_and_resets() -> None:
    with HopperServer() as server:
        sns = sns_client(server.endpoint_url)
        topic = sns.create_topic(Name="alerts")["TopicArn"]
        sns.subscribe(TopicArn=topic, Protocol="sms", Endpoint="+15555550100")
        sns.subscribe(TopicArn=topic, Protocol="lambda",
                      Endpoint="arn:aws:lambda:us-east-1:000000000000:function:f")
        email = sns.subscribe(TopicArn=topic, Protocol="email", Endpoint="ops@example.com",
                              ReturnSubscriptionArn=True)["SubscriptionArn"]
        sns.publish(TopicArn=topic, MessageStructure="json",
                    Message='{"default": "disk full", "sms": "DISK FULL"}')
        sent = server.sent()
        by_protocol = {s.protocol: s for s in sent}
        assert by_protocol["sms"].body == "DISK FULL"
        assert '"Message": "disk full"' in by_protocol["lambda"].body
        # The email subscription is pending: it got its confirmation request only.
        assert '"Type": "SubscriptionConfirmation"' in by_protocol["email"].body
        assert by_protocol["email"].subscription_arn == email
        server.reset()
        assert sns.list_topics()["Topics"] == []
        assert server.sent() == []
