"""What a scenario drives: one server, through boto3 (JSON) and the query client.

Every call records an *answer* — a plain dict that `normalise` and `compare` read:

    {"protocol": "json", "op": "SendMessage", "params": {...}, "status": 200,
     "response": {...}}                                   # a success
    {"protocol": "json", "op": ..., "params": ..., "status": 400,
     "error": {"Code": ..., "QueryErrorCode": ..., "Type": ..., "Message": ...,
               "x-amzn-query-error": ...}}                # an error
    {"protocol": "query", "op": ..., "params": ..., "status": 200,
     "result": {...}}  or  "error": {"Type": ..., "Code": ..., "Message": ...}

`params` is kept to explain a difference, never compared (long values are cut).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # the query client lives with the server tests
    sys.path.insert(0, str(ROOT))

from tests.server.query_client import QueryClient, Response, flatten, listed  # noqa: E402

CALL_TIMEOUT = 15.0
SHOWN_PARAM_CHARS = 120

# boto3 must not retry (a retried error would hide the first answer) nor refuse to
# send a value the scenario means to be invalid.
CLIENT_CONFIG = Config(
    region_name="us-east-1",
    retries={"total_max_attempts": 1},
    connect_timeout=5,
    read_timeout=CALL_TIMEOUT,
    parameter_validation=False,
)

# Query names of the structured members (the installed JSON model no longer has them).
_QUERY_NAMES = {
    "Attributes": "Attribute",
    "AttributeNames": "AttributeName",
    "MessageAttributes": "MessageAttribute",
    "MessageAttributeNames": "MessageAttributeName",
    "MessageSystemAttributes": "MessageSystemAttribute",
    "MessageSystemAttributeNames": "MessageSystemAttributeName",
    "Tags": "Tag",
    "TagKeys": "TagKey",
    "AWSAccountIds": "AWSAccountId",
    "Actions": "ActionName",
}


class Target:
    """One server under test, for one scenario: `call` speaks JSON through boto3,
    `query` speaks the query protocol; both record into `answers` (unless
    `record=False`) and return what they recorded."""

    def __init__(self, name: str, endpoint: str, scenario: str) -> None:
        self.name = name
        self.endpoint = endpoint
        self.scenario = scenario
        self.answers: list[dict[str, Any]] = []
        self._client: Any = None
        self._query: QueryClient | None = None
        self._sns: Any = None

    # -- clients ---------------------------------------------------------------

    def client(self) -> Any:
        """A boto3 SQS client for this server (made once)."""
        if self._client is None:
            self._client = boto3.client(
                "sqs",
                endpoint_url=self.endpoint,
                aws_access_key_id="test",
                aws_secret_access_key="test",
                config=CLIENT_CONFIG,
            )
        return self._client

    def sns_client(self) -> Any:
        """A boto3 SNS client for this server (made once): the same endpoint."""
        if self._sns is None:
            self._sns = boto3.client(
                "sns", endpoint_url=self.endpoint, aws_access_key_id="test",
                aws_secret_access_key="test", config=CLIENT_CONFIG,
            )
        return self._sns

    def sns(self, op: str, *, record: bool = True, **params: Any) -> dict[str, Any]:
        """Call SNS's `op` (e.g. "Publish") with boto3 (SNS speaks the query protocol)."""
        method = getattr(self.sns_client(), _snake(op))
        answer: dict[str, Any] = {"protocol": "sns", "op": op, "params": _shown(params)}
        try:
            response = dict(method(**params))
        except ClientError as failure:
            meta = failure.response.get("ResponseMetadata", {})
            error = {k: v for k, v in failure.response.get("Error", {}).items()
                     if k in ("Code", "Type", "Message")}
            answer |= {"status": meta.get("HTTPStatusCode"), "error": error}
        else:
            meta = response.pop("ResponseMetadata", {})
            answer |= {"status": meta.get("HTTPStatusCode"), "response": response}
        return self._keep(answer, record)

    def query_client(self) -> QueryClient:
        if self._query is None:
            self._query = QueryClient(self.endpoint, timeout=CALL_TIMEOUT)
        return self._query

    def close(self) -> None:
        if self._query is not None:
            self._query.close()
        if self._client is not None:
            self._client.close()

    def queue_name(self, suffix: str = "q") -> str:
        """A queue name of this scenario's own (the same on every server)."""
        base = self.scenario.replace("_", "-")[:60]
        return f"{base}-{suffix}" if suffix else base

    # -- calls -----------------------------------------------------------------

    def call(self, op: str, *, record: bool = True, **params: Any) -> dict[str, Any]:
        """Call `op` (SQS's name, e.g. "SendMessage") over JSON with boto3."""
        method = getattr(self.client(), _snake(op))
        answer: dict[str, Any] = {"protocol": "json", "op": op, "params": _shown(params)}
        try:
            response = dict(method(**params))
        except ClientError as failure:
            meta = failure.response.get("ResponseMetadata", {})
            error = dict(failure.response.get("Error", {}))
            header = meta.get("HTTPHeaders", {}).get("x-amzn-query-error")
            if header is not None:
                error["x-amzn-query-error"] = header
            answer |= {"status": meta.get("HTTPStatusCode"), "error": error}
        else:
            meta = response.pop("ResponseMetadata", {})
            answer |= {"status": meta.get("HTTPStatusCode"), "response": response}
        return self._keep(answer, record)

    def query(
        self,
        op: str,
        params: Mapping[str, Any] | None = None,
        *,
        record: bool = True,
        method: str = "POST",
        path: str = "/",
    ) -> dict[str, Any]:
        """Call `op` over the query protocol; `params` are structured as for `call`
        (they are put in query form here) or already flat (`Attribute.1.Name`)."""
        flat = query_form(op, params or {})
        response: Response = self.query_client().call(op, flat, method=method, path=path)
        answer: dict[str, Any] = {
            "protocol": "query", "op": op, "params": _shown(flat), "status": response.status,
        }
        if response.error is not None:
            answer["error"] = {k: response.error.get(k) for k in ("Type", "Code", "Message")}
        elif response.xml is None:
            answer["body"] = response.text[:200]
        else:
            answer["result"] = response.result
        return self._keep(answer, record)

    def _keep(self, answer: dict[str, Any], record: bool) -> dict[str, Any]:
        if record:
            self.answers.append(answer)
        return answer

    # -- shortcuts used by many scenarios -----------------------------------------

    def create_queue(self, suffix: str = "q", *, record: bool = True, **attributes: Any) -> str:
        """Create this scenario's queue `suffix` over JSON; its URL."""
        params: dict[str, Any] = {"QueueName": self.queue_name(suffix)}
        if attributes:
            params["Attributes"] = {k: str(v) for k, v in attributes.items()}
        answer = self.call("CreateQueue", record=record, **params)
        if "response" not in answer:
            raise ScenarioError(f"CreateQueue failed: {answer.get('error')}")
        return str(answer["response"]["QueueUrl"])

    def receipts(self, answer: dict[str, Any]) -> list[str]:
        """The receipt handles of a recorded ReceiveMessage answer, either protocol."""
        if answer["protocol"] == "json":
            messages = (answer.get("response") or {}).get("Messages", [])
        else:
            messages = listed((answer.get("result") or {}).get("Message"))
        return [str(message["ReceiptHandle"]) for message in messages]


class ScenarioError(RuntimeError):
    """A scenario could not go on (its set-up failed): recorded as its last answer."""


def query_form(op: str, params: Mapping[str, Any]) -> dict[str, str]:
    """Structured parameters (boto3's shape) in query form; flat ones pass through."""
    flat: dict[str, str] = {}
    for member, value in params.items():
        if member == "Entries":
            entries = [_query_entry(entry) for entry in value]
            flat.update(flatten(f"{op}RequestEntry", entries))
        elif isinstance(value, Mapping | list | tuple) or member in _QUERY_NAMES:
            flat.update(flatten(_QUERY_NAMES.get(member, member), value))
        else:
            flat.update(flatten(member, value))
    return flat


def _query_entry(entry: Mapping[str, Any]) -> dict[str, Any]:
    return {_QUERY_NAMES.get(member, member): value for member, value in entry.items()}


def _snake(op: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in op).lstrip("_")


def _shown(value: Any) -> Any:
    """`value` with long strings cut, for the report."""
    if isinstance(value, Mapping):
        return {k: _shown(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_shown(v) for v in value]
    if isinstance(value, str | bytes) and len(value) > SHOWN_PARAM_CHARS:
        return f"<{len(value)} {'chars' if isinstance(value, str) else 'bytes'}>"
    return value
