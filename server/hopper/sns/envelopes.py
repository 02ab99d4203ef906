"""What a subscriber receives: SNS's JSON envelope, or (raw delivery) the message
itself with its attributes as the queue's message attributes.

The envelope's fields, in AWS's order (SNS Developer Guide, "Amazon SNS message and
JSON formats"): Type, MessageId, SequenceNumber (FIFO), TopicArn, Subject (when given),
Message, Timestamp, SignatureVersion, Signature, SigningCertURL, UnsubscribeURL,
MessageAttributes (when any, as `{"Name": {"Type": ..., "Value": ...}}`, binary values
in base64).
"""

from __future__ import annotations

import base64
import datetime
import json
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlencode

from hopper.core.model import MessageAttribute
from hopper.sns.model import Publication
from hopper.sns.signing import CERTIFICATE_PATH, Signer


@dataclass(frozen=True)
class Addresses:
    """Where subscribers reach this server back: `base_url` is "scheme://host:port"."""

    base_url: str

    @property
    def certificate(self) -> str:
        return self.base_url + CERTIFICATE_PATH

    def unsubscribe(self, subscription_arn: str) -> str:
        query = urlencode({"Action": "Unsubscribe", "SubscriptionArn": subscription_arn})
        return f"{self.base_url}/?{query}"

    def confirm(self, topic_arn: str, token: str) -> str:
        query = urlencode({"Action": "ConfirmSubscription", "TopicArn": topic_arn,
                           "Token": token})
        return f"{self.base_url}/?{query}"


def timestamp(epoch: float) -> str:
    """SNS's timestamps: ISO 8601 in UTC with milliseconds, `2012-05-02T00:54:06.655Z`."""
    moment = datetime.datetime.fromtimestamp(epoch, datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def notification(
    publication: Publication,
    protocol: str,
    subscription_arn: str,
    signer: Signer,
    addresses: Addresses,
    signature_version: str,
) -> dict[str, object]:
    """The Notification envelope of `publication` for one subscription."""
    envelope: dict[str, object] = {"Type": "Notification", "MessageId": publication.id}
    if publication.sequence_number is not None:
        envelope["SequenceNumber"] = f"{publication.sequence_number:020d}"
    envelope["TopicArn"] = publication.topic_arn
    if publication.subject is not None:
        envelope["Subject"] = publication.subject
    envelope["Message"] = publication.text_for(protocol)
    envelope["Timestamp"] = timestamp(publication.timestamp)
    signed = {k: str(v) for k, v in envelope.items()}
    envelope["SignatureVersion"] = signature_version
    envelope["Signature"] = signer.sign(signed, signature_version)
    envelope["SigningCertURL"] = addresses.certificate
    envelope["UnsubscribeURL"] = addresses.unsubscribe(subscription_arn)
    if publication.attributes:
        envelope["MessageAttributes"] = attributes_json(publication.attributes)
    return envelope


def confirmation(
    topic_arn: str,
    token: str,
    message_id: str,
    now: float,
    signer: Signer,
    addresses: Addresses,
    signature_version: str,
) -> dict[str, object]:
    """The SubscriptionConfirmation an HTTP/S endpoint gets when it is subscribed."""
    subscribe_url = addresses.confirm(topic_arn, token)
    envelope: dict[str, object] = {
        "Type": "SubscriptionConfirmation",
        "MessageId": message_id,
        "Token": token,
        "TopicArn": topic_arn,
        "Message": (
            f"You have chosen to subscribe to the topic {topic_arn}.\n"
            "To confirm the subscription, visit the SubscribeURL included in this message."
        ),
        "SubscribeURL": subscribe_url,
        "Timestamp": timestamp(now),
    }
    signed = {k: str(v) for k, v in envelope.items()}
    envelope["SignatureVersion"] = signature_version
    envelope["Signature"] = signer.sign(signed, signature_version)
    envelope["SigningCertURL"] = addresses.certificate
    return envelope


def attributes_json(attributes: Mapping[str, MessageAttribute]) -> dict[str, dict[str, str]]:
    out = {}
    for name, attribute in attributes.items():
        if attribute.binary_value is not None:
            value = base64.b64encode(attribute.binary_value).decode("ascii")
        else:
            value = attribute.string_value or ""
        out[name] = {"Type": attribute.data_type, "Value": value}
    return out


def dumps(envelope: Mapping[str, object]) -> str:
    # AWS's envelopes escape "/" nowhere and keep non-ASCII text as it is.
    return json.dumps(envelope, ensure_ascii=False, indent=2)
