"""ARNs and names of topics and subscriptions, and the queue ARNs subscriptions name."""

from __future__ import annotations

import re

from hopper.sns.errors import invalid

_TOPIC_NAME = re.compile(r"[A-Za-z0-9_-]{1,256}")
_FIFO_TOPIC_NAME = re.compile(r"[A-Za-z0-9_-]{1,251}\.fifo")
# arn:aws:<service>:<region>:<account>:<name>, as AWS writes them (the partition may
# be aws-cn or aws-us-gov too).
_ARN = re.compile(r"arn:aws(?:-[a-z-]+)?:([a-z0-9-]+):([a-z0-9-]+):(\d{12}|[^:]+):(.+)")


def topic_arn(region: str, account: str, name: str) -> str:
    return f"arn:aws:sns:{region}:{account}:{name}"


def account_prefix(region: str, account: str) -> str:
    """What every topic (and subscription) ARN of an account in a region starts with."""
    return f"arn:aws:sns:{region}:{account}:"


def check_topic_name(name: str, fifo: bool) -> None:
    """AWS: 1-256 ASCII letters, digits, `_` and `-`; a FIFO topic's name ends `.fifo`
    (within the 256). Raises InvalidParameter."""
    if fifo:
        if not _FIFO_TOPIC_NAME.fullmatch(name):
            raise invalid(
                "Fifo Topic names must end with .fifo and must be made up of only uppercase "
                "and lowercase ASCII letters, numbers, underscores, and hyphens, and must be "
                "between 1 and 256 characters long."
            )
    elif not _TOPIC_NAME.fullmatch(name):
        raise invalid("Topic Name")


def parse_arn(arn: str) -> tuple[str, str, str, str] | None:
    """(service, region, account, resource) of an ARN, or None."""
    match = _ARN.fullmatch(arn)
    if match is None:
        return None
    service, region, account, resource = match.groups()
    return service, region, account, resource


def is_topic_arn(arn: str) -> bool:
    parts = parse_arn(arn)
    return parts is not None and parts[0] == "sns" and ":" not in parts[3]


def topic_of_subscription(arn: str) -> str | None:
    """The topic ARN a subscription ARN (`<topic arn>:<id>`) starts with, or None."""
    parts = parse_arn(arn)
    if parts is None or parts[0] != "sns" or parts[3].count(":") != 1:
        return None
    return arn.rsplit(":", 1)[0]
