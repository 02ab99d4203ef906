"""One SQS call over either protocol, answered in one shape, so a test states a rule once
and runs it on JSON (boto3) and on the query protocol (QueryClient) alike.

    answer = caller("TagQueue", QueueUrl=url, Tags={})
    assert (answer.code, answer.message) == ("MissingParameter", "...")

`code` is the query code (what botocore's query-compatible mapping gives as
`Error.Code` for JSON); successes are read with `value`, `messages` and `attributes`,
which know where each protocol puts them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

from .query_client import QueryClient, flatten, listed

# Query names of the structured members (the JSON model no longer carries them).
_QUERY_NAMES = {
    "Attributes": "Attribute",
    "AttributeNames": "AttributeName",
    "MessageAttributes": "MessageAttribute",
    "MessageAttributeNames": "MessageAttributeName",
    "MessageSystemAttributeNames": "MessageSystemAttributeName",
    "Tags": "Tag",
    "TagKeys": "TagKey",
}


@dataclass(frozen=True)
class Answer:
    """An answer of either protocol: `body` is boto3's response (JSON) or the
    `<{Action}Result>` element (query); `code`/`message` are set for an error."""

    protocol: str
    status: int
    body: Any
    code: str | None = None
    message: str | None = None

    def value(self, member: str) -> Any:
        """A scalar member of the result (`QueueUrl`, `MessageId`, ...)."""
        return (self.body or {}).get(member)

    def messages(self) -> list[dict[str, Any]]:
        """ReceiveMessage's messages in the JSON shape, whichever protocol answered."""
        if self.protocol == "json":
            return list((self.body or {}).get("Messages", []))
        return [_json_message(message) for message in listed((self.body or {}).get("Message"))]

    def attributes(self) -> dict[str, str]:
        """GetQueueAttributes' `Attributes` as a plain map."""
        if self.protocol == "json":
            return dict((self.body or {}).get("Attributes", {}))
        return _pairs((self.body or {}).get("Attribute"))


class Caller:
    """Calls SQS actions over one protocol against one endpoint (`region` for SigV4)."""

    def __init__(self, protocol: str, endpoint: str, region: str = "us-east-1") -> None:
        self.protocol = protocol
        self.endpoint = endpoint
        self.region = region
        self._client: Any = None
        self._query: QueryClient | None = None

    def __call__(self, op: str, **params: Any) -> Answer:
        if self.protocol == "json":
            return self._json(op, params)
        return self.query(op, query_form(op, params))

    def query(
        self, op: str, flat: Mapping[str, str], *, method: str = "POST", path: str = "/"
    ) -> Answer:
        """A query-protocol call with flat parameters, to any method and path."""
        if self._query is None:
            self._query = QueryClient(self.endpoint, region=self.region)
        response = self._query.call(op, flat, method=method, path=path)
        error = response.error
        if error is not None:
            return Answer("query", response.status, None, error.get("Code"), error.get("Message"))
        return Answer("query", response.status, response.result)

    def _json(self, op: str, params: Mapping[str, Any]) -> Answer:
        if self._client is None:
            self._client = boto3.client(
                "sqs",
                endpoint_url=self.endpoint,
                region_name=self.region,
                aws_access_key_id="test",
                aws_secret_access_key="test",
                # Send what the test says, even what the model would refuse to send.
                config=Config(retries={"total_max_attempts": 1}, parameter_validation=False),
            )
        method = getattr(self._client, _snake(op))
        try:
            response = dict(method(**params))
        except ClientError as failure:
            error = failure.response["Error"]
            status = failure.response["ResponseMetadata"]["HTTPStatusCode"]
            return Answer("json", status, None, error.get("Code"), error.get("Message"))
        status = response.pop("ResponseMetadata")["HTTPStatusCode"]
        return Answer("json", status, response)

    def close(self) -> None:
        if self._query is not None:
            self._query.close()
        if self._client is not None:
            self._client.close()


def query_form(op: str, params: Mapping[str, Any]) -> dict[str, str]:
    """boto3-shaped parameters in query form (batch entries included)."""
    flat: dict[str, str] = {}
    for member, value in params.items():
        if member == "Entries":
            entries = [{_QUERY_NAMES.get(k, k): v for k, v in entry.items()} for entry in value]
            flat.update(flatten(f"{op}RequestEntry", entries))
        else:
            flat.update(flatten(_QUERY_NAMES.get(member, member), value))
    return flat


def _json_message(message: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in message.items() if k not in ("Attribute", "MessageAttribute")}
    if "Attribute" in message:
        out["Attributes"] = _pairs(message["Attribute"])
    if "MessageAttribute" in message:
        out["MessageAttributes"] = {
            item["Name"]: dict(item["Value"]) for item in listed(message["MessageAttribute"])
        }
    return out


def _pairs(value: Any) -> dict[str, str]:
    return {item["Name"]: item["Value"] for item in listed(value)}


def _snake(op: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in op).lstrip("_")
