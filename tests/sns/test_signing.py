"""Signatures as SNS message-validation libraries check them: the canonical string of
the Developer Guide, verified with the public key of the served certificate."""

from __future__ import annotations

import base64

import pytest
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding

from hopper.sns.signing import Signer, canonical, new_key

NOTIFICATION = {
    "Type": "Notification", "MessageId": "m-1", "TopicArn": "arn:aws:sns:us-east-1:1:t",
    "Subject": "s", "Message": "hello\nworld", "Timestamp": "2026-01-01T00:00:00.000Z",
}


def test_a_notification_signs_its_fields_in_the_guides_order() -> None:
    assert canonical(NOTIFICATION) == (
        b"Message\nhello\nworld\nMessageId\nm-1\nSubject\ns\n"
        b"Timestamp\n2026-01-01T00:00:00.000Z\nTopicArn\narn:aws:sns:us-east-1:1:t\n"
        b"Type\nNotification\n"
    )


def test_a_notification_without_subject_leaves_it_out() -> None:
    without = {k: v for k, v in NOTIFICATION.items() if k != "Subject"}
    assert b"Subject" not in canonical(without)


def test_a_confirmation_signs_its_url_and_token() -> None:
    confirmation = {"Type": "SubscriptionConfirmation", "MessageId": "m", "Token": "tok",
                    "TopicArn": "t", "Message": "msg", "SubscribeURL": "http://x/",
                    "Timestamp": "ts"}
    assert canonical(confirmation) == (
        b"Message\nmsg\nMessageId\nm\nSubscribeURL\nhttp://x/\nTimestamp\nts\n"
        b"Token\ntok\nTopicArn\nt\nType\nSubscriptionConfirmation\n"
    )


@pytest.mark.parametrize(("version", "algorithm"), [("1", hashes.SHA1()),
                                                    ("2", hashes.SHA256())])
def test_signatures_verify_with_the_certificates_key(version, algorithm) -> None:
    signer = Signer(new_key())
    signature = base64.b64decode(signer.sign(NOTIFICATION, version))
    key = x509.load_pem_x509_certificate(signer.certificate).public_key()
    assert key.verify(signature, canonical(NOTIFICATION), padding.PKCS1v15(), algorithm) is None
    tampered = canonical({**NOTIFICATION, "Message": "changed"})
    with pytest.raises(InvalidSignature):
        key.verify(signature, tampered, padding.PKCS1v15(), algorithm)
