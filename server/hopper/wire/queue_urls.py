"""Queue URLs and queue ARNs: how a queue is named on the wire, and back.

A queue URL is `{base_url}/{account}/{name}`; requests are matched by account and
name whatever scheme and host the client used (SDKs rewrite hosts, proxies too).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote, urlsplit

from hopper.core.model import QueueKey
from hopper.wire.context import RequestContext
from hopper.wire.errors import SqsError, missing_parameter

_NO_QUEUE = "The specified queue does not exist."
_NO_QUEUE_QUERY = "The specified queue does not exist for this wsdl version."


def queue_url(ctx: RequestContext, key: QueueKey) -> str:
    return f"{ctx.base_url}/{key.account}/{key.name}"


def queue_arn(ctx: RequestContext, key: QueueKey) -> str:
    return f"arn:aws:sqs:{ctx.region}:{key.account}:{key.name}"


def no_such_queue() -> SqsError:
    """QueueDoesNotExist, worded per protocol as AWS does."""
    return SqsError("QueueDoesNotExist", _NO_QUEUE, query_message=_NO_QUEUE_QUERY)


def parse_queue_url(ctx: RequestContext, url: str) -> QueueKey:
    """The queue a `QueueUrl` names. Any scheme and host; the path must be
    `/<account>/<name>`, and the account must be the one this request acts for
    (hopper serves one account: another account's queue does not exist here). A bare
    queue name names the caller's own queue, as AWS resolves it."""
    path = urlsplit(url).path if "://" in url else url
    parts = [unquote(part) for part in path.strip("/").split("/")]
    if len(parts) == 1 and parts[0] and "://" not in url:
        return QueueKey(ctx.account, parts[0])
    if len(parts) != 2 or not all(parts):
        raise no_such_queue()
    account, name = parts
    if account != ctx.account:
        raise no_such_queue()
    return QueueKey(account, name)


def addressed_queue(ctx: RequestContext, params: Mapping[str, Any]) -> QueueKey:
    """The queue a request acts on: its `QueueUrl` parameter, else the queue URL the
    request was sent to (the PHP SDK and query clients post to it), else
    MissingParameter."""
    url = params.get("QueueUrl")
    if isinstance(url, str) and url:
        return parse_queue_url(ctx, url)
    if ctx.path_queue is not None:
        if ctx.path_queue.account != ctx.account:
            raise no_such_queue()
        return ctx.path_queue
    raise missing_parameter("QueueUrl")


def parse_queue_arn(arn: str) -> QueueKey | None:
    """The queue an `arn:aws:sqs:<region>:<account>:<name>` names, or None when the
    text is not an SQS queue ARN (any partition is accepted: aws, aws-cn, ...)."""
    parts = arn.split(":")
    if len(parts) != 6 or parts[0] != "arn" or parts[2] != "sqs":
        return None
    account, name = parts[4], parts[5]
    if not account or not name:
        return None
    return QueueKey(account, name)
