"""Permissions: AddPermission and RemovePermission shape the queue's Policy document."""

from __future__ import annotations

from conformance.registry import scenario
from conformance.target import Target

FRIEND = "111122223333"


@scenario
def add_permission_and_remove_permission_shape_the_policy(t: Target) -> list[dict]:
    url = t.create_queue()
    t.call("AddPermission", QueueUrl=url, Label="friend-sends", AWSAccountIds=[FRIEND],
           Actions=["SendMessage"])
    t.call("GetQueueAttributes", QueueUrl=url, AttributeNames=["Policy"])
    t.call("RemovePermission", QueueUrl=url, Label="friend-sends")
    t.call("GetQueueAttributes", QueueUrl=url, AttributeNames=["Policy"])
    return t.answers


@scenario
def add_permission_with_a_label_in_use_is_invalid_parameter_value(t: Target) -> list[dict]:
    url = t.create_queue()
    for _ in range(2):
        t.call("AddPermission", QueueUrl=url, Label="twice", AWSAccountIds=[FRIEND],
               Actions=["ReceiveMessage"])
    return t.answers


@scenario
def remove_permission_with_an_unknown_label_is_invalid_parameter_value(t: Target) -> list[dict]:
    url = t.create_queue()
    t.call("RemovePermission", QueueUrl=url, Label="never-added")
    return t.answers


@scenario
def add_permission_without_accounts_or_actions_is_rejected(t: Target) -> list[dict]:
    url = t.create_queue()
    t.call("AddPermission", QueueUrl=url, Label="no-accounts", AWSAccountIds=[],
           Actions=["SendMessage"])
    t.call("AddPermission", QueueUrl=url, Label="no-actions", AWSAccountIds=[FRIEND],
           Actions=[])
    return t.answers


@scenario
def permissions_on_a_missing_queue_are_non_existent_queue(t: Target) -> list[dict]:
    url = t.create_queue(record=False).replace(t.queue_name(), t.queue_name("missing"))
    t.call("AddPermission", QueueUrl=url, Label="l", AWSAccountIds=[FRIEND],
           Actions=["SendMessage"])
    t.call("RemovePermission", QueueUrl=url, Label="l")
    return t.answers
