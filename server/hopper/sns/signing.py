"""Signatures of what SNS sends: hopper's own RSA key and a self-signed certificate
for it, served at the `SigningCertURL` of every message.

The string signed is SNS's (Developer Guide, "Verifying the signatures of Amazon SNS
messages"): for each of the message's fields in a fixed order, its name and value on
lines of their own. A Notification signs Message, MessageId, Subject (when it has one),
Timestamp, TopicArn, Type; a SubscriptionConfirmation or UnsubscribeConfirmation
signs Message, MessageId, SubscribeURL, Timestamp, Token, TopicArn, Type.
SignatureVersion 1 is SHA1withRSA, 2 SHA256withRSA.

Every server over one store signs with one key (`TopicStore.signing_key`), so any of
them serves the certificate that verifies any message.
"""

from __future__ import annotations

import base64
import datetime
from collections.abc import Mapping

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.x509.oid import NameOID

_NOTIFICATION_FIELDS = ("Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type")
_CONFIRMATION_FIELDS = (
    "Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type",
)
CERTIFICATE_PATH = "/sns/SimpleNotificationService-hopper.pem"


def new_key() -> bytes:
    """A fresh 2048-bit RSA private key, PEM."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


class Signer:
    """Signs messages with one key; `certificate` is its self-signed PEM certificate."""

    def __init__(self, key_pem: bytes) -> None:
        key = serialization.load_pem_private_key(key_pem, password=None)
        if not isinstance(key, rsa.RSAPrivateKey):
            raise ValueError("the SNS signing key must be an RSA key")
        self._key = key
        self.certificate = _certificate(key)

    def sign(self, message: Mapping[str, str], version: str) -> str:
        """The base64 signature of `message` (an envelope's fields)."""
        algorithm = hashes.SHA256() if version == "2" else hashes.SHA1()  # noqa: S303
        signature = self._key.sign(canonical(message), padding.PKCS1v15(), algorithm)
        return base64.b64encode(signature).decode("ascii")


def canonical(message: Mapping[str, str]) -> bytes:
    """The string SNS signs for `message`."""
    fields = _NOTIFICATION_FIELDS if message["Type"] == "Notification" else _CONFIRMATION_FIELDS
    lines = []
    for name in fields:
        if name in message:
            lines.append(f"{name}\n{message[name]}\n")
    return "".join(lines).encode("utf-8")


def _certificate(key: rsa.RSAPrivateKey) -> bytes:
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "sns.amazonaws.com")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=3650))
        .sign(key, hashes.SHA256())
    )
    return certificate.public_bytes(serialization.Encoding.PEM)
