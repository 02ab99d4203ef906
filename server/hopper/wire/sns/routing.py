"""Which requests are SNS's: a request names its service in its SigV4 credential
scope (`<key>/<date>/<region>/sns/aws4_request`), signed or not, and hopper reads it
with authentication off too. A request without a credential is SNS's when its Action
is one only SNS has; the actions both APIs have (AddPermission, RemovePermission) then
stay SQS's, as they always were."""

from __future__ import annotations

import re
from collections.abc import Mapping

from hopper.wire import forms

_SCOPE = re.compile(r"[^/\s,]+/\d{8}/([a-z0-9-]+)/([a-z0-9-]+)/aws4_request")
SNS_ONLY_ACTIONS = frozenset({
    "CreateTopic", "DeleteTopic", "ListTopics", "GetTopicAttributes", "SetTopicAttributes",
    "Subscribe", "ConfirmSubscription", "Unsubscribe", "ListSubscriptions",
    "ListSubscriptionsByTopic", "GetSubscriptionAttributes", "SetSubscriptionAttributes",
    "Publish", "PublishBatch", "TagResource", "UntagResource", "ListTagsForResource",
})


def scope(headers: Mapping[str, str], query_string: bytes) -> tuple[str, str] | None:
    """(region, service) of a request's credential scope, or None without one."""
    credential = headers.get("authorization", "").partition("Credential=")[2]
    if not credential and b"X-Amz-Credential" in query_string:
        credential = forms.form_fields(query_string).get("X-Amz-Credential", "")
    match = _SCOPE.match(credential)
    return (match.group(1), match.group(2)) if match else None


def region(headers: Mapping[str, str], query_string: bytes, home: str) -> str:
    """The region an SNS request is signed for; `home` when it names none."""
    found = scope(headers, query_string)
    return home if found is None else found[0]


def is_sns(headers: Mapping[str, str], query_string: bytes, body: bytes) -> bool:
    """Whether the request is SNS's (never a JSON-protocol request: SNS has none)."""
    if "x-amz-target" in headers:
        return False
    found = scope(headers, query_string)
    if found is not None:
        return found[1] == "sns"
    try:
        action = forms.form_fields(query_string).get("Action")
        if action is None and body:
            action = forms.form_fields(body).get("Action")
    except Exception:  # a malformed form is SQS's to refuse, as before
        return False
    return action in SNS_ONLY_ACTIONS
