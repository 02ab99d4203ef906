"""AWS Signature Version 4, verified: the canonical request rebuilt from what arrived,
the string to sign, the signing key from the caller's secret, compared in constant time.

Follows AWS's "Create a signed AWS API request" (SigV4) for a non-S3 service, as SDKs
sign SQS requests: the canonical URI is the path as sent, dot segments and repeated
slashes removed, then percent-encoded once more (non-S3 services encode twice); the
canonical query string is every parameter but X-Amz-Signature, decoded and re-encoded
(RFC 3986 unreserved characters kept) and sorted; the payload hash is the SHA-256 of the
body exactly as it arrived, whatever the client put in X-Amz-Content-SHA256 (so a body
cannot be swapped under a signed "UNSIGNED-PAYLOAD"; query-protocol forms are hashed as
bytes, never re-encoded). Two places carry a signature: the Authorization header, or
query parameters (a presigned URL, X-Amz-Algorithm ... X-Amz-Signature).

Errors are AWS's (texts as AWS answers SQS requests): no signature at all is
MissingAuthenticationToken, a malformed one IncompleteSignature, an unknown key
InvalidClientTokenId, a wrong secret or a bad scope SignatureDoesNotMatch, a date more
than 15 minutes off SignatureDoesNotMatch ("Signature expired" / "not yet current"), a
presigned URL used after its X-Amz-Expires RequestExpired. `X-Amz-Target` (the JSON
action) and `Content-Type` (which protocol the body is read as) must be signed when they
are sent, else a captured request could be made to do something else (IncompleteSignature).
"""

from __future__ import annotations

import calendar
import functools
import hashlib
import hmac
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from urllib.parse import quote

from hopper.auth.credentials import Credential
from hopper.wire.errors import SqsError
from hopper.wire.forms import MAX_FIELDS, too_many_fields, unquote_plus

ALGORITHM = "AWS4-HMAC-SHA256"
SERVICE = "sqs"
# SNS shares the endpoint: its requests are scoped to `sns` (and routed by that scope,
# so a request of either service never reaches the other).
SERVICES = frozenset({SERVICE, "sns"})
# AWS refuses a request whose date is more than 15 minutes from its own clock.
MAX_SKEW_SECONDS = 15 * 60
# A presigned URL may live at most 7 days (X-Amz-Expires 1..604800), as AWS allows.
MAX_EXPIRES_SECONDS = 7 * 24 * 3600
_AMZ_DATE = "%Y%m%dT%H%M%SZ"
_AMZ_DATE_PATTERN = re.compile(r"(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z")
_QUERY_AUTH = (
    "X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-SignedHeaders",
    "X-Amz-Signature",
)
# Headers that change what a request does: signed whenever they are present.
_MUST_SIGN = {"x-amz-target": "X-Amz-Target", "content-type": "Content-Type"}
_WRONG_SIGNATURE = (
    "The request signature we calculated does not match the signature you provided. "
    "Check your AWS Secret Access Key and signing method. Consult the service "
    "documentation for details."
)


@dataclass(frozen=True)
class Arrival:
    """A request as it came off the wire: `path` and `query` still percent-encoded,
    header names lower-case (a name may repeat), the body's exact bytes."""

    method: str
    path: str
    query: str
    headers: Sequence[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> list[str]:
        return [value for key, value in self.headers if key == name]


@dataclass(frozen=True)
class Claim:
    """What a request says about its signature, before anything is checked."""

    access_key: str
    scope_date: str
    region: str
    service: str
    terminator: str
    signed_headers: tuple[str, ...]
    signature: str
    amz_date: str  # yyyymmddThhmmssZ
    expires: int | None  # presigned URLs only
    query_pairs: tuple[tuple[str, str], ...]  # raw, X-Amz-Signature left out

    @property
    def scope(self) -> str:
        return f"{self.scope_date}/{self.region}/{self.service}/{self.terminator}"


def verify(arrival: Arrival, keys: Mapping[str, Credential], now: float) -> Credential:
    """The credential that signed `arrival`; raises SqsError (see the module doc)."""
    claim = read_claim(arrival)
    if claim is None:
        raise SqsError("MissingAuthenticationToken", "Request is missing Authentication Token")
    check_scope(claim)
    check_signed_headers(arrival, claim)
    check_time(claim, now)
    credential = keys.get(claim.access_key)
    if credential is None:
        raise SqsError(
            "InvalidClientTokenId", "The security token included in the request is invalid."
        )
    expected = signature(credential.secret_key, claim, string_to_sign(arrival, claim))
    if not hmac.compare_digest(expected.encode(), claim.signature.encode()):
        raise SqsError("SignatureDoesNotMatch", _WRONG_SIGNATURE)
    return credential


# --- reading the claim -----------------------------------------------------------------


def read_claim(arrival: Arrival) -> Claim | None:
    """The request's signature claim; None when it carries none. Raises
    IncompleteSignature when one is there but malformed."""
    pairs = _raw_pairs(arrival.query)
    decoded = {_decoded(key): _decoded(value) for key, value in pairs}
    authorization = arrival.header("authorization")
    if authorization:
        return _header_claim(authorization[0], arrival, pairs)
    if "X-Amz-Algorithm" in decoded or "X-Amz-Signature" in decoded:
        return _query_claim(decoded, pairs)
    return None


def _header_claim(
    header: str, arrival: Arrival, pairs: list[tuple[str, str]]
) -> Claim:
    algorithm, _, rest = header.strip().partition(" ")
    if algorithm != ALGORITHM:
        raise _incomplete(f"Unsupported authorization algorithm {algorithm!r} (use {ALGORITHM}).")
    fields = {}
    for part in rest.split(","):
        name, equals, value = part.strip().partition("=")
        if equals:
            fields[name] = value
    missing = [
        f"Authorization header requires '{name}' parameter."
        for name in ("Credential", "Signature", "SignedHeaders")
        if not fields.get(name)
    ]
    if missing:
        raise _incomplete(" ".join(missing) + f" Authorization={header}")
    return _claim(
        fields["Credential"], fields["SignedHeaders"], fields["Signature"],
        _header_date(arrival), None, pairs,
    )


def _header_date(arrival: Arrival) -> str:
    amz = arrival.header("x-amz-date")
    if amz:
        return amz[0].strip()
    date = arrival.header("date")
    if date:
        try:
            return parsedate_to_datetime(date[0]).strftime(_AMZ_DATE)
        except (TypeError, ValueError):
            pass
    raise _incomplete("Authorization header requires existence of either a 'X-Amz-Date' or "
                      "a 'Date' header.")


def _query_claim(decoded: Mapping[str, str], pairs: list[tuple[str, str]]) -> Claim:
    missing = [name for name in (*_QUERY_AUTH, "X-Amz-Expires") if not decoded.get(name)]
    if missing:
        raise _incomplete(
            "AWS query-string parameters must include " + ", ".join(f"'{m}'" for m in missing)
            + ". Re-examine the query-string parameters."
        )
    if decoded["X-Amz-Algorithm"] != ALGORITHM:
        raise _incomplete(f"Unsupported X-Amz-Algorithm {decoded['X-Amz-Algorithm']!r}.")
    text = decoded["X-Amz-Expires"]
    # ASCII and short: "²".isdigit() holds and int() refuses it, as it refuses a text of
    # thousands of digits (a 500 before; the client's fault).
    if not (text.isascii() and text.isdigit() and len(text) <= 9) or not (
        1 <= int(text) <= MAX_EXPIRES_SECONDS
    ):
        raise _incomplete(
            f"X-Amz-Expires must be 1 to {MAX_EXPIRES_SECONDS} seconds, not {text!r}."
        )
    return _claim(
        decoded["X-Amz-Credential"], decoded["X-Amz-SignedHeaders"],
        decoded["X-Amz-Signature"], decoded["X-Amz-Date"], int(text), pairs,
    )


def _claim(
    credential: str,
    signed_headers: str,
    signature_hex: str,
    amz_date: str,
    expires: int | None,
    pairs: list[tuple[str, str]],
) -> Claim:
    parts = credential.split("/")
    if len(parts) != 5 or not all(parts):
        raise _incomplete(
            f"Credential must have exactly 5 slash-delimited elements, e.g. "
            f"keyid/date/region/service/term, got '{credential}'"
        )
    _parse_amz_date(amz_date)
    access_key, scope_date, region, service, terminator = parts
    return Claim(
        access_key=access_key,
        scope_date=scope_date,
        region=region,
        service=service,
        terminator=terminator,
        signed_headers=tuple(signed_headers.split(";")),
        signature=signature_hex,
        amz_date=amz_date,
        expires=expires,
        query_pairs=tuple(
            (key, value) for key, value in pairs if _decoded(key) != "X-Amz-Signature"
        ),
    )


def _incomplete(message: str) -> SqsError:
    return SqsError("IncompleteSignature", message)


# --- checks ------------------------------------------------------------------------------


def check_scope(claim: Claim) -> None:
    """The credential scope names this service, the request's date, and AWS's terminator.
    Any region is accepted: hopper answers clients configured for any region."""
    if claim.terminator != "aws4_request":
        raise SqsError(
            "SignatureDoesNotMatch",
            f"Credential should be scoped with a valid terminator: 'aws4_request', not "
            f"'{claim.terminator}'.",
        )
    if claim.service not in SERVICES:
        raise SqsError(
            "SignatureDoesNotMatch",
            f"Credential should be scoped to correct service: '{SERVICE}'.",
        )
    if claim.scope_date != claim.amz_date[:8]:
        raise SqsError(
            "SignatureDoesNotMatch",
            "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date "
            f"from HTTP: '{claim.scope_date}' != '{claim.amz_date[:8]}', from "
            f"'{claim.amz_date}'.",
        )


def check_signed_headers(arrival: Arrival, claim: Claim) -> None:
    """X-Amz-Target and Content-Type, when sent, are among the signed headers."""
    for name, spelling in _MUST_SIGN.items():
        if arrival.header(name) and name not in claim.signed_headers:
            raise _incomplete(
                f"'{spelling}' must be a 'SignedHeader' in the AWS Authorization when the "
                "request carries it."
            )


def check_time(claim: Claim, now: float) -> None:
    """Within 15 minutes of `now` (header signatures); a presigned URL also until its
    X-Amz-Expires runs out."""
    signed_at = _parse_amz_date(claim.amz_date)
    if signed_at > now + MAX_SKEW_SECONDS:
        raise SqsError(
            "SignatureDoesNotMatch",
            f"Signature not yet current: {claim.amz_date} is still later than "
            f"{_format(now + MAX_SKEW_SECONDS)} ({_format(now)} + 15 min.)",
        )
    if claim.expires is not None:
        if now > signed_at + claim.expires:
            raise SqsError("RequestExpired", "Request has expired.")
        return
    if signed_at < now - MAX_SKEW_SECONDS:
        raise SqsError(
            "SignatureDoesNotMatch",
            f"Signature expired: {claim.amz_date} is now earlier than "
            f"{_format(now - MAX_SKEW_SECONDS)} ({_format(now)} - 15 min.)",
        )


def _parse_amz_date(text: str) -> float:
    # By hand: time.strptime costs a third of a whole verification.
    match = _AMZ_DATE_PATTERN.fullmatch(text)
    if match is not None:
        year, month, day, hour, minute, second = (int(part) for part in match.groups())
        if 1 <= month <= 12 and 1 <= day <= 31 and hour < 24 and minute < 60 and second < 61:
            return float(calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0)))
    raise _incomplete(
        f"Date must be in ISO-8601 'basic format' (yyyyMMdd'T'HHmmss'Z'), got '{text}'."
    )


def _format(moment: float) -> str:
    return time.strftime(_AMZ_DATE, time.gmtime(moment))


# --- the signature ---------------------------------------------------------------------


def canonical_request(arrival: Arrival, claim: Claim) -> str:
    headers = [
        f"{name}:{','.join(' '.join(v.split()) for v in arrival.header(name))}"
        for name in claim.signed_headers
    ]
    return "\n".join([
        arrival.method.upper(),
        canonical_uri(arrival.path),
        canonical_query(claim.query_pairs),
        "\n".join(headers) + "\n",
        ";".join(claim.signed_headers),
        hashlib.sha256(arrival.body).hexdigest(),
    ])


def canonical_uri(raw_path: str) -> str:
    segments = [s for s in raw_path.split("/") if s and s != "."]
    kept: list[str] = []
    for segment in segments:
        if segment == "..":
            if kept:
                kept.pop()
        else:
            kept.append(segment)
    path = "/" + "/".join(kept)
    if raw_path.endswith("/") and kept:
        path += "/"
    return quote(path, safe="/~")


def canonical_query(pairs: Sequence[tuple[str, str]]) -> str:
    encoded = sorted(
        (quote(_decoded(key), safe="-_.~"), quote(_decoded(value), safe="-_.~"))
        for key, value in pairs
    )
    return "&".join(f"{key}={value}" for key, value in encoded)


def string_to_sign(arrival: Arrival, claim: Claim) -> str:
    digest = hashlib.sha256(canonical_request(arrival, claim).encode("utf-8")).hexdigest()
    return "\n".join([ALGORITHM, claim.amz_date, claim.scope, digest])


def signature(secret_key: str, claim: Claim, text: str) -> str:
    key = _signing_key(secret_key, claim.scope_date, claim.region, claim.service)
    return hmac.new(key, text.encode("utf-8"), hashlib.sha256).hexdigest()


@functools.lru_cache(maxsize=256)
def _signing_key(secret_key: str, date: str, region: str, service: str) -> bytes:
    key = ("AWS4" + secret_key).encode("utf-8")
    for part in (date, region, service, "aws4_request"):
        key = hmac.new(key, part.encode("utf-8"), hashlib.sha256).digest()
    return key


def _decoded(raw: str) -> str:
    # The query string arrives as latin-1 text of its bytes; decoded as the request's
    # parameters are (hopper.wire.forms), so what is signed is what is acted on.
    return unquote_plus(raw.encode("latin-1"))


def _raw_pairs(query: str) -> list[tuple[str, str]]:
    if query.count("&") >= MAX_FIELDS:  # refused before any is decoded, as the parameters
        raise too_many_fields()
    pairs = []
    for item in query.split("&"):
        if item:
            key, _, value = item.partition("=")
            pairs.append((key, value))
    return pairs
