"""HTTP/S delivery policies: AWS's limits, and the retry schedule's four phases."""

from __future__ import annotations

import json
import random

import pytest

from hopper.sns import delivery_policies
from hopper.sns.delivery_policies import RetryPolicy, delay, policy_of
from hopper.sns.errors import InvalidParameter


def retry(**fields: object) -> str:
    return json.dumps({"healthyRetryPolicy": fields})


def test_the_default_is_three_retries_twenty_seconds_apart() -> None:
    assert policy_of(None, None) == RetryPolicy(3, 20, 20)


def test_a_subscriptions_policy_wins_over_its_topics() -> None:
    topic = json.dumps({"http": {"defaultHealthyRetryPolicy": {"numRetries": 7}}})
    assert policy_of(None, topic).num_retries == 7
    assert policy_of(retry(numRetries=1), topic).num_retries == 1


@pytest.mark.parametrize("fields", [
    {"numRetries": 101}, {"numRetries": -1}, {"minDelayTarget": 0},
    {"maxDelayTarget": 3601}, {"minDelayTarget": 30, "maxDelayTarget": 20},
    {"numRetries": 2, "numNoDelayRetries": 2, "numMaxDelayRetries": 1},
    {"backoffFunction": "cubic"}, {"numRetries": "3"},
])
def test_policies_beyond_aws_limits_are_refused(fields: dict) -> None:
    with pytest.raises(InvalidParameter):
        delivery_policies.check(retry(**fields))


def test_the_limits_themselves_are_accepted() -> None:
    text = retry(numRetries=100, minDelayTarget=1, maxDelayTarget=3600, numNoDelayRetries=40,
                 numMinDelayRetries=30, numMaxDelayRetries=30, backoffFunction="exponential")
    delivery_policies.check(text)
    assert policy_of(text, None) == RetryPolicy(100, 1, 3600, 40, 30, 30, "exponential")


def test_the_schedule_runs_its_phases_with_exponential_backoff() -> None:
    policy = RetryPolicy(num_retries=7, min_delay=1, max_delay=16, no_delay_retries=1,
                         min_delay_retries=1, max_delay_retries=1, backoff="exponential")
    fixed = random.Random(0)
    delays = [delay(policy, n, fixed) for n in range(1, 8)]
    assert delays[0] == 0.0
    assert 0.9 <= delays[1] <= 1.0
    backoff = delays[2:6]
    assert backoff == sorted(backoff) and 0.9 <= backoff[0] <= 1.0
    assert 14.4 <= backoff[-1] <= 16.0
    assert 14.4 <= delays[6] <= 16.0
