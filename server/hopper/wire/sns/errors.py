"""SNS errors on the wire, and the one table that joins the topic core's errors (and
the SQS-named errors of the shared edge: authentication, throttling, bodies) to them.
Codes and statuses are botocore's model's (sns 2010-03-31, each exception's `error`)."""

from __future__ import annotations

from dataclasses import dataclass

from hopper.core.errors import QueueError
from hopper.sns import errors as core
from hopper.wire.errors import SqsError

# code -> HTTP status (sender fault unless named in _RECEIVER).
STATUS = {
    "AuthorizationError": 403, "BatchEntryIdsNotDistinct": 400, "BatchRequestTooLong": 400,
    "EmptyBatchRequest": 400, "FilterPolicyLimitExceeded": 403, "InternalError": 500,
    "InvalidBatchEntryId": 400, "InvalidParameter": 400, "ParameterValueInvalid": 400,
    "NotFound": 404, "ResourceNotFound": 404, "TagLimitExceeded": 400,
    "TooManyEntriesInBatchRequest": 400, "InvalidAction": 400, "MissingAction": 400,
    "ValidationError": 400, "ServiceUnavailable": 503,
}
_RECEIVER = frozenset({"InternalError", "ServiceUnavailable"})


@dataclass
class SnsError(Exception):
    code: str
    message: str
    status: int = 400

    @property
    def sender(self) -> bool:
        return self.code not in _RECEIVER


def error(code: str, message: str) -> SnsError:
    return SnsError(code, message, STATUS.get(code, 400))


def from_core(failure: core.TopicError) -> SnsError:
    """The SNS error of a topic-core error."""
    if isinstance(failure, core.NotFound):
        return error("NotFound", failure.what)
    if isinstance(failure, core.ResourceNotFound):
        return error("ResourceNotFound", "Resource does not exist")
    if isinstance(failure, core.InvalidParameterValue):
        return error("ParameterValueInvalid", failure.text)
    if isinstance(failure, core.InvalidParameter):
        return error("InvalidParameter", failure.text)
    if isinstance(failure, core.BatchError):
        return error(failure.code, failure.text)
    if isinstance(failure, core.FilterPolicyLimitExceeded):
        return error("FilterPolicyLimitExceeded", failure.text)
    if isinstance(failure, core.TagLimitExceeded):
        return error("TagLimitExceeded", failure.text)
    if isinstance(failure, core.AuthorizationError):
        return error("AuthorizationError", failure.text)
    return internal()


def from_sqs(failure: SqsError) -> SnsError:
    """An error of the edge both services share (signatures, throttling, a body too
    large, a malformed form), under the same code SQS's query protocol gives it."""
    code = failure.code
    return SnsError(code.query_code, failure.text_for("query"), code.status)


def from_queue(failure: QueueError) -> SnsError:
    """A queue-core error reaching SNS (a store that is down)."""
    name = type(failure).__name__
    if name == "StoreUnavailable":
        return error("ServiceUnavailable", "The service is unavailable. Please try again.")
    return internal()


def internal() -> SnsError:
    return error("InternalError", "An internal error occurred. Please try again.")


def batch_entry(failure: core.TopicError) -> tuple[str, str, bool]:
    """(code, message, sender fault) of one PublishBatch entry's failure."""
    wire = from_core(failure)
    return wire.code, wire.message, wire.sender
