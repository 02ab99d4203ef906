"""Queue URLs and queue ARNs: how a queue is named on the wire, and back.

A queue URL is `{base_url}/{account}/{name}` in the server's own region and
`{base_url}/{region}/{account}/{name}` in any other (regions.py); requests are matched
by region, account and name whatever scheme and host the client used (SDKs rewrite
hosts, proxies too).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote, urlsplit

from hopper.core.model import QueueKey
from hopper.wire.context import RequestContext
from hopper.wire.errors import SqsError, missing_parameter
from hopper.wire.regions import scoped_account, split_account

_NO_QUEUE = "The specified queue does not exist."
_NO_QUEUE_QUERY = "The specified queue does not exist for this wsdl version."
# What an account id, a region and a queue name can be (names: CreateQueue's rule,
# .fifo included). Anything else names no queue, and never reaches a store: PostgreSQL
# refuses NUL in text, and an echoed control character breaks XML.
_ACCOUNT = re.compile(r"[A-Za-z0-9_-]{1,64}")
_REGION = re.compile(r"[a-z0-9-]{0,32}")
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,80}")


def queue_url(ctx: RequestContext, key: QueueKey) -> str:
    account, region = split_account(key.account, ctx.home)
    if region == ctx.home:
        return f"{ctx.base_url}/{account}/{key.name}"
    return f"{ctx.base_url}/{region}/{account}/{key.name}"


def queue_arn(ctx: RequestContext, key: QueueKey) -> str:
    account, region = split_account(key.account, ctx.home)
    return f"arn:aws:sqs:{region}:{account}:{key.name}"


def account_of(ctx: RequestContext, key: QueueKey) -> str:
    """The account id owning `key` (without its region)."""
    return split_account(key.account, ctx.home)[0]


def no_such_queue() -> SqsError:
    """QueueDoesNotExist, worded per protocol as AWS does."""
    return SqsError("QueueDoesNotExist", _NO_QUEUE, query_message=_NO_QUEUE_QUERY)


def path_queue(segments: list[str], home: str) -> QueueKey | None:
    """The queue a URL path names: `<account>/<name>` (the server's own region) or
    `<region>/<account>/<name>`; None for any other path."""
    if not all(segments):
        return None
    if len(segments) == 2:
        return QueueKey(segments[0], segments[1])
    if len(segments) == 3:
        region, account, name = segments
        return QueueKey(scoped_account(account, region, home), name)
    return None


# QueueUrl -> queue, per (url, account, region, home): a client sends the same few URLs
# over and over, and their parse (split, unquote, three patterns) was a tenth of
# hopper's own CPU for a SendMessage. Bounded: emptied when full.
_PARSED: dict[tuple[str, str, str, str | None], QueueKey | None] = {}
_PARSED_MAX = 4096


def parse_queue_url(ctx: RequestContext, url: str) -> QueueKey:
    """The queue a `QueueUrl` names. Any scheme and host; the path must be a queue's
    (see `path_queue`), and the account must be the one this request acts for (another
    account's queue does not exist for it). A bare queue name names the caller's own
    queue in the request's region, as AWS resolves it."""
    memo = (url, ctx.account, ctx.region, ctx.home_region)
    if memo in _PARSED:
        key = _PARSED[memo]
    else:
        if len(_PARSED) >= _PARSED_MAX:
            _PARSED.clear()
        key = _PARSED[memo] = _parsed(ctx, url)
    if key is None:
        raise no_such_queue()
    return key


def _parsed(ctx: RequestContext, url: str) -> QueueKey | None:
    """parse_queue_url's answer, None for no queue."""
    path = urlsplit(url).path if "://" in url else url
    parts = [unquote(part) for part in path.strip("/").split("/")]
    if len(parts) == 1 and parts[0] and "://" not in url:
        return QueueKey(ctx.owner, parts[0]) if could_name_queue(parts[0]) else None
    key = path_queue(parts, ctx.home)
    if key is None or account_of(ctx, key) != ctx.account or not _plausible(ctx, key):
        return None
    return key


def could_name_queue(name: str) -> bool:
    """Whether `name` could be a queue's name at all (see _NAME)."""
    return _NAME.fullmatch(name) is not None


def _plausible(ctx: RequestContext, key: QueueKey) -> bool:
    account, region = split_account(key.account, ctx.home)
    return (
        _ACCOUNT.fullmatch(account) is not None
        and _REGION.fullmatch(region) is not None
        and could_name_queue(key.name)
    )


def addressed_queue(ctx: RequestContext, params: Mapping[str, Any]) -> QueueKey:
    """The queue a request acts on: its `QueueUrl` parameter, else the queue URL the
    request was sent to (the PHP SDK and query clients post to it), else
    MissingParameter."""
    url = params.get("QueueUrl")
    if isinstance(url, str) and url:
        return parse_queue_url(ctx, url)
    if ctx.path_queue is not None:
        if account_of(ctx, ctx.path_queue) != ctx.account or not _plausible(
            ctx, ctx.path_queue
        ):
            raise no_such_queue()
        return ctx.path_queue
    raise missing_parameter("QueueUrl")


def parse_queue_arn(arn: str, home: str | None = None) -> QueueKey | None:
    """The queue an `arn:aws:sqs:<region>:<account>:<name>` names, or None when the
    text is not an SQS queue ARN (any partition is accepted: aws, aws-cn, ...). With
    `home` (the server's region) the key is the region's; without it, region is moot."""
    parts = arn.split(":")
    if len(parts) != 6 or parts[0] != "arn" or parts[2] != "sqs":
        return None
    region, account, name = parts[3], parts[4], parts[5]
    if not (_ACCOUNT.fullmatch(account) and _REGION.fullmatch(region) and _NAME.fullmatch(name)):
        return None
    return QueueKey(scoped_account(account, region, home), name)
