"""The MD5 digests SQS returns with messages, byte-exact with AWS.

SDKs other than botocore (Java, Go, JS, .NET, Ruby) recompute these and reject a
response whose digest differs, so a wrong byte here breaks real clients while every
boto3 test still passes. The attribute digest is AWS's (undocumented but stable)
encoding, as SQS-NOTES.md §5.4 records it: attributes sorted by name; for each, the
name, the full DataType (custom suffix included) and the value, each prefixed with its
4-byte big-endian length, and a one-byte transport type between type and value.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Mapping

from hopper.core.model import MessageAttribute

# AWS's transport-type bytes. The list types (3, 4) are reserved by AWS and never
# accepted on the wire, so they are not hashed here.
STRING_TRANSPORT = 1
BINARY_TRANSPORT = 2


def md5_of_body(body: str) -> str:
    """The hex MD5 of the body's UTF-8 bytes (MD5OfMessageBody)."""
    return hashlib.md5(body.encode("utf-8"), usedforsecurity=False).hexdigest()


def md5_of_attributes(attributes: Mapping[str, MessageAttribute]) -> str | None:
    """MD5OfMessageAttributes; None when there are no attributes, because AWS omits the
    field then (the MD5 of nothing, d41d8..., would fail SDK checks that expect none).

    Names are sorted by code point, which is the order of their UTF-8 bytes.
    """
    if not attributes:
        return None
    digest = hashlib.md5(usedforsecurity=False)
    for name in sorted(attributes):
        digest.update(_attribute_bytes(name, attributes[name]))
    return digest.hexdigest()


def md5_of_system_attributes(trace_header: str | None) -> str | None:
    """MD5OfMessageSystemAttributes: AWS hashes its only system attribute, AWSTraceHeader,
    with the user-attribute function. None when there is no trace header."""
    if trace_header is None:
        return None
    return md5_of_attributes(
        {"AWSTraceHeader": MessageAttribute(data_type="String", string_value=trace_header)}
    )


def _attribute_bytes(name: str, attribute: MessageAttribute) -> bytes:
    transport, value = _transport_and_value(attribute)
    return b"".join(
        [
            _length_prefixed(name.encode("utf-8")),
            _length_prefixed(attribute.data_type.encode("utf-8")),
            bytes([transport]),
            _length_prefixed(value),
        ]
    )


def _transport_and_value(attribute: MessageAttribute) -> tuple[int, bytes]:
    # A validated attribute carries binary_value exactly when its base type is Binary
    # (Binary.gif included) and string_value for String and Number (Number.float ...).
    if attribute.binary_value is not None:
        return BINARY_TRANSPORT, attribute.binary_value
    return STRING_TRANSPORT, (attribute.string_value or "").encode("utf-8")


def _length_prefixed(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data
