"""The topic core's errors: facts only. `hopper.wire.sns.errors` is the one table that
turns them into SNS's codes, statuses and texts."""

from __future__ import annotations

from dataclasses import dataclass


class TopicError(Exception):
    """Base of every error the topic core raises on purpose."""


@dataclass
class NotFound(TopicError):
    """A topic, subscription or endpoint that does not exist. `what` is AWS's sentence
    ("Topic does not exist")."""

    what: str


@dataclass
class ResourceNotFound(TopicError):
    """The resource of a tag action does not exist (SNS's tag API has its own code)."""


@dataclass
class InvalidParameter(TopicError):
    """A parameter SNS refuses; `text` is AWS's whole message ("Invalid parameter: ...")."""

    text: str


@dataclass
class InvalidParameterValue(TopicError):
    """SNS's other parameter error (code ParameterValueInvalid), for message attributes."""

    text: str


@dataclass
class FilterPolicyLimitExceeded(TopicError):
    text: str


@dataclass
class TagLimitExceeded(TopicError):
    text: str


@dataclass
class AuthorizationError(TopicError):
    text: str


@dataclass
class BatchError(TopicError):
    """PublishBatch refused whole: `code` is one of SNS's batch codes
    (EmptyBatchRequest, TooManyEntriesInBatchRequest, BatchEntryIdsNotDistinct,
    InvalidBatchEntryId, BatchRequestTooLong)."""

    code: str
    text: str


def invalid(text: str) -> InvalidParameter:
    """An InvalidParameter worded as AWS words most of them."""
    return InvalidParameter(f"Invalid parameter: {text}")
