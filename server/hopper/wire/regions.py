"""Regions: queues are per region, as on AWS, and a request's region is its SigV4
credential scope's.

The store seam has no region: a queue outside the server's own region (`--region`)
lives under a region-qualified account, `<account>:<region>`, so one name in two
regions is two queues and each region lists only its own, while the server's own
region keeps the plain account (and with it every queue stored before regions, its
short URL and its ARN). The qualified form never leaves hopper: URLs and ARNs name
the region in AWS's places (`/<region>/<account>/<name>`, `arn:aws:sqs:<region>:...`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import parse_qsl

# Credential=<key id>/<date>/<region>/sqs/aws4_request, in the Authorization header or
# (presigned) the X-Amz-Credential query parameter. Read whether or not auth is on.
_SCOPE = re.compile(r"[^/\s,]+/\d{8}/([a-z0-9-]+)/sqs/aws4_request")
_QUALIFIER = ":"


# Credential -> the region its scope names (None: none): a client signs every request
# for the same scope all day. The pattern cannot cross a comma, so the text before the
# first one decides. Bounded: emptied when full.
_REGIONS: dict[str, str | None] = {}
_REGIONS_MAX = 4096


def request_region(headers: Mapping[str, str], query_string: bytes, home: str) -> str:
    """The region a request is signed for; `home` when it names none."""
    credential = headers.get("authorization", "").partition("Credential=")[2]
    if not credential and b"X-Amz-Credential" in query_string:
        fields = dict(parse_qsl(query_string.decode("latin-1")))
        credential = fields.get("X-Amz-Credential", "")
    scope = credential.partition(",")[0]
    if scope in _REGIONS:
        region = _REGIONS[scope]
    else:
        if len(_REGIONS) >= _REGIONS_MAX:
            _REGIONS.clear()
        region = _REGIONS[scope] = _scope_region(scope)
    return home if region is None else region


def _scope_region(credential: str) -> str | None:
    match = _SCOPE.match(credential)
    return match.group(1) if match else None


def scoped_account(account: str, region: str, home: str | None) -> str:
    """The store's account for `account`'s queues in `region`."""
    if home is None or region == home:
        return account
    return f"{account}{_QUALIFIER}{region}"


def split_account(scoped: str, home: str) -> tuple[str, str]:
    """(account, region) of a store account."""
    account, _, region = scoped.partition(_QUALIFIER)
    return account, region or home
