"""SQS errors on the wire, and the one table that joins core errors to them.

An `SqsError` names its error by the JSON protocol's shape name (`QueueDoesNotExist`,
`InvalidParameterValue`, ...). `CODES` gives, per name, what each protocol shows:
the JSON `__type`, the query code (also sent in JSON's `x-amzn-query-error` header so
botocore's query-compatible mapping finds the same exception class as against AWS),
the HTTP status and who is at fault. Values follow SQS-NOTES.md §5.2.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hopper.core import characters
from hopper.core import errors as core
from hopper.wire.attribute_names import sqs_attribute_name

_SQS = "com.amazonaws.sqs#"
_CORAL = "com.amazon.coral.service#"
_PREFIXED = "AWS.SimpleQueueService."


@dataclass(frozen=True)
class Code:
    json_type: str
    query_code: str
    status: int = 400
    sender: bool = True


def _sqs(name: str, *, prefixed: bool = False, status: int = 400) -> Code:
    return Code(_SQS + name, (_PREFIXED + name) if prefixed else name, status)


CODES: dict[str, Code] = {
    "QueueDoesNotExist": Code(_SQS + "QueueDoesNotExist", _PREFIXED + "NonExistentQueue"),
    "QueueNameExists": Code(_SQS + "QueueNameExists", "QueueAlreadyExists"),
    "QueueDeletedRecently": _sqs("QueueDeletedRecently", prefixed=True),
    "BatchEntryIdsNotDistinct": _sqs("BatchEntryIdsNotDistinct", prefixed=True),
    "BatchRequestTooLong": _sqs("BatchRequestTooLong", prefixed=True),
    "EmptyBatchRequest": _sqs("EmptyBatchRequest", prefixed=True),
    "InvalidBatchEntryId": _sqs("InvalidBatchEntryId", prefixed=True),
    "TooManyEntriesInBatchRequest": _sqs("TooManyEntriesInBatchRequest", prefixed=True),
    "MessageNotInflight": _sqs("MessageNotInflight", prefixed=True),
    "UnsupportedOperation": _sqs("UnsupportedOperation", prefixed=True),
    "PurgeQueueInProgress": _sqs("PurgeQueueInProgress", prefixed=True, status=403),
    "OverLimit": _sqs("OverLimit", status=403),
    "ResourceNotFoundException": _sqs("ResourceNotFoundException", status=404),
    "InvalidAttributeName": _sqs("InvalidAttributeName"),
    "InvalidAttributeValue": _sqs("InvalidAttributeValue"),
    "ReceiptHandleIsInvalid": _sqs("ReceiptHandleIsInvalid"),
    "InvalidIdFormat": _sqs("InvalidIdFormat"),
    "InvalidMessageContents": _sqs("InvalidMessageContents"),
    "InvalidAddress": _sqs("InvalidAddress"),
    "InvalidSecurity": _sqs("InvalidSecurity"),
    # 403: the status botocore's retry rules expect of SQS's RequestThrottled.
    "RequestThrottled": _sqs("RequestThrottled", status=403),
    "InvalidParameterValue": Code(
        _CORAL + "InvalidParameterValueException", "InvalidParameterValue"
    ),
    "MissingParameter": Code(_CORAL + "MissingRequiredParameterException", "MissingParameter"),
    "AccessDenied": Code(_CORAL + "AccessDeniedException", "AccessDenied", 403),
    "InvalidClientTokenId": Code(_CORAL + "InvalidClientTokenId", "InvalidClientTokenId", 403),
    "SignatureDoesNotMatch": Code(_CORAL + "SignatureDoesNotMatch", "SignatureDoesNotMatch", 403),
    "MissingAuthenticationToken": Code(
        _CORAL + "MissingAuthenticationTokenException", "MissingAuthenticationToken", 403
    ),
    "IncompleteSignature": Code(_CORAL + "IncompleteSignatureException", "IncompleteSignature"),
    "RequestExpired": Code(_CORAL + "RequestExpired", "RequestExpired"),
    # An action this endpoint does not know, or may not run here.
    "InvalidAction": Code(_CORAL + "UnknownOperationException", "InvalidAction"),
    "UnknownOperationException": Code(
        _CORAL + "UnknownOperationException", "UnknownOperationException", 404
    ),
    # A body that is not the JSON or form encoding it claims to be.
    "SerializationException": Code(_CORAL + "SerializationException", "MalformedQueryString"),
    "RequestEntityTooLarge": Code(_CORAL + "RequestEntityTooLarge", "RequestEntityTooLarge", 413),
    "ServiceUnavailable": Code(
        _CORAL + "ServiceUnavailable", "ServiceUnavailable", 503, sender=False
    ),
    "InternalFailure": Code(_CORAL + "InternalFailure", "InternalFailure", 500, sender=False),
}


@dataclass
class SqsError(Exception):
    """An error as SQS names it. `query_message` is set where AWS's query protocol uses
    another text than its JSON protocol (NonExistentQueue does)."""

    name: str
    message: str
    query_message: str | None = None

    def __post_init__(self) -> None:
        if self.name not in CODES:
            raise ValueError(f"unknown SQS error name {self.name!r}")
        # Texts quote input (an unknown action, a refused value), and input may hold
        # what XML 1.0 cannot carry at all, not even as a character reference: U+FFFD
        # stands in for it, so every answer that quotes it still parses. (Answers that
        # are not errors return only what was accepted, and stored values never hold
        # such characters: core/characters.py.)
        self.message = _printable(self.message)
        if self.query_message is not None:
            self.query_message = _printable(self.query_message)

    @property
    def code(self) -> Code:
        return CODES[self.name]

    def text_for(self, protocol: str) -> str:
        if protocol == "query" and self.query_message is not None:
            return self.query_message
        return self.message


def _printable(text: str) -> str:
    return characters.FORBIDDEN.sub("\ufffd", text)


def missing_parameter(parameter: str) -> SqsError:
    return SqsError("MissingParameter", f"The request must contain the parameter {parameter}.")


def invalid_parameter_value(parameter: str, value: Any, reason: str) -> SqsError:
    return SqsError(
        "InvalidParameterValue",
        f"Value {value} for parameter {parameter} is invalid. Reason: {reason}",
    )


_ALLOWED_CHARACTERS = characters.ALLOWED_SET


def _attribute_label(field: str) -> str:
    return sqs_attribute_name(field)


def _receipt_text(receipt: Any) -> str:
    return str(getattr(receipt, "handle", "") or receipt)


_TRANSLATIONS: dict[type[core.QueueError], Callable[[Any, bool], SqsError]] = {
    core.QueueNotFound: lambda e, _b: SqsError(
        "QueueDoesNotExist",
        "The specified queue does not exist.",
        query_message="The specified queue does not exist for this wsdl version.",
    ),
    core.QueueNameTaken: lambda e, _b: SqsError(
        "QueueNameExists",
        "A queue already exists with the same name and a different value for attribute "
        + _attribute_label(e.attribute),
    ),
    core.QueueDeletedRecently: lambda e, _b: SqsError(
        "QueueDeletedRecently",
        "You must wait 60 seconds after deleting a queue before you can create another "
        "with the same name.",
    ),
    core.PurgeInProgress: lambda e, _b: SqsError(
        "PurgeQueueInProgress",
        f"Only one PurgeQueue operation on {e.key.name} is allowed every 60 seconds.",
    ),
    # Checked before its base class: from_core walks the MRO, subclass first.
    core.InvalidParameterRule: lambda e, _b: SqsError("InvalidParameterValue", e.reason),
    core.InvalidParameter: lambda e, _b: invalid_parameter_value(e.parameter, e.value, e.reason),
    core.InvalidAttributeValue: lambda e, _b: SqsError(
        "InvalidAttributeValue",
        f"Invalid value for the parameter {_attribute_label(e.attribute)}. Reason: {e.reason}",
    ),
    core.InvalidAttributeName: lambda e, _b: SqsError(
        "InvalidAttributeName", e.reason or f"Unknown Attribute {_attribute_label(e.attribute)}."
    ),
    # AWS words this one differently inside a batch's Failed[] entry.
    core.MessageTooLong: lambda e, in_batch: SqsError(
        "InvalidParameterValue",
        ("One or more parameters cannot be validated." if in_batch else
         "One or more parameters are invalid.")
        + f" Reason: Message must be shorter than {e.limit} bytes.",
    ),
    core.InvalidMessageContents: lambda e, _b: SqsError(
        "InvalidMessageContents",
        f"Invalid binary character was found in the {e.what}, the set of allowed "
        f"characters is {_ALLOWED_CHARACTERS}",
    ),
    core.StaleReceipt: lambda e, _b: SqsError(
        "ReceiptHandleIsInvalid",
        f'The input receipt handle "{_receipt_text(e.receipt)}" is not a valid receipt '
        "handle. Reason: The receipt has been superseded by a newer delivery of the "
        f"message (fencing token {e.receipt.token} < current {e.current}).",
    ),
    core.ReceiptExpired: lambda e, _b: invalid_parameter_value(
        "ReceiptHandle", _receipt_text(e.receipt), "The receipt handle has expired."
    ),
    core.MessageNotAvailable: lambda e, _b: invalid_parameter_value(
        "ReceiptHandle",
        _receipt_text(e.receipt),
        "Message does not exist or is not available for visibility timeout change.",
    ),
    core.InvalidReceipt: lambda e, _b: SqsError(
        "ReceiptHandleIsInvalid",
        f'The input receipt handle "{e.receipt_handle}" is not a valid receipt handle.',
    ),
    core.TooManyEntries: lambda e, _b: SqsError(
        "TooManyEntriesInBatchRequest",
        f"Maximum number of entries per request are {e.limit}. You have sent {e.count}.",
    ),
    core.EmptyBatch: lambda e, _b: SqsError(
        "EmptyBatchRequest", "There should be at least one entry in the request."
    ),
    core.InvalidBatchEntryId: lambda e, _b: SqsError(
        "InvalidBatchEntryId",
        "A batch entry id can only contain alphanumeric characters, hyphens and "
        "underscores. It can be at most 80 letters long.",
    ),
    core.BatchEntryIdsNotDistinct: lambda e, _b: SqsError(
        "BatchEntryIdsNotDistinct", f"Id {e.entry_id} repeated."
    ),
    core.BatchTooLong: lambda e, _b: SqsError(
        "BatchRequestTooLong",
        f"Batch requests cannot be longer than {e.limit} bytes. You have sent {e.size} bytes.",
    ),
    core.OverLimit: lambda e, _b: SqsError("OverLimit", e.reason),
    core.ResourceNotFound: lambda e, _b: SqsError(
        "ResourceNotFoundException",
        "Task does not exist."
        if e.parameter is None
        else f"The resource that you specified for the {e.parameter} parameter doesn't exist.",
    ),
    core.UnsupportedOperation: lambda e, _b: SqsError("UnsupportedOperation", e.reason),
    core.MissingParameter: lambda e, _b: missing_parameter(e.parameter),
    core.StoreUnavailable: lambda e, _b: SqsError(
        "ServiceUnavailable", "The service is unavailable. Please try again shortly."
    ),
}


def from_core(error: core.QueueError, *, in_batch: bool = False) -> SqsError:
    """The SQS error for a core error. Every core error class has exactly one entry."""
    for cls in type(error).__mro__:
        translate = _TRANSLATIONS.get(cls)
        if translate is not None:
            return translate(error, in_batch)
    return SqsError("InternalFailure", "We encountered an internal error. Please try again.")


def internal_failure() -> SqsError:
    return SqsError("InternalFailure", "We encountered an internal error. Please try again.")
