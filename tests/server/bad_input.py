"""A generated corpus of malformed SQS requests, and what a well-formed answer is.

Every action starts from a valid request (in the JSON protocol's shape); each case
replaces one member of it, at any depth (a map's key or value, a list element, a batch
entry's field), with one hostile value, and is sent in both protocols. Hostile values
are what broke hopper before: integers past Python's 4,300-digit limit, floats past
float range, digits `int()` refuses (`²`), JSON nested 1,000 deep (as a value and as
the text of a policy), lone surrogates, NUL and other control characters, wrong JSON
types. A few hand-made cases add what a member swap cannot express: URL paths, query
list indices, forged receipt and task handles, broken JSON bodies, the dashboard.

A case is raw bytes on the wire (JSON fragments are spliced in as text, so `1e400` or
`"\\ud800"` arrive exactly so), sent unsigned: the corpus server runs without auth.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote
from xml.etree import ElementTree

from hopper.wire.shapes import INPUTS

JSON_TYPE = "application/x-amz-json-1.0"
FORM_TYPE = "application/x-www-form-urlencoded; charset=utf-8"
ACCOUNT = "000000000000"
DEEP = 1_000


@dataclass(frozen=True)
class Hostile:
    """One hostile value: its JSON text, and its query text (None: not expressible)."""

    label: str
    json_text: str
    query_text: str | None


def _string(text: str) -> str:
    # json.dumps escapes lone surrogates and control characters as \uXXXX, as a
    # client's serializer would.
    return json.dumps(text)


HOSTILE = [
    Hostile("huge-integer", "9" * 4_400, "9" * 4_400),
    Hostile("huge-negative-integer", "-" + "9" * 4_400, "-" + "9" * 4_400),
    Hostile("float-past-range", "1e400", "1e400"),
    Hostile("huge-float", "1e300", "1e300"),
    Hostile("superscript-digit", _string("²"), "²"),
    Hostile("arabic-digit", _string("٣"), "٣"),
    Hostile("lone-surrogate", _string("\ud800"), "\ud800"),
    Hostile("nul", _string("\x00"), "\x00"),
    Hostile("control-character", _string("a\x01b"), "a\x01b"),
    Hostile("trace-root-surrogate", _string("Root=\ud800"), "Root=\ud800"),
    Hostile("deep-json-text", _string("[" * DEEP + "]" * DEEP), "[" * DEEP + "]" * DEEP),
    Hostile("deep-object-text", _string('{"a":' * DEEP + "1" + "}" * DEEP), None),
    Hostile("deep-nesting", "[" * DEEP + "]" * DEEP, None),
    Hostile("broken-json-text", _string('{"a":'), '{"a":'),
    Hostile("empty", '""', ""),
    Hostile("long-text", _string("x" * 9_000), "x" * 9_000),
    Hostile("true", "true", "true"),
    Hostile("null", "null", None),
    Hostile("object", "{}", None),
    Hostile("list", "[]", None),
    Hostile("negative", "-1", "-1"),
    Hostile("fraction", "3.5", "3.5"),
]


@dataclass(frozen=True)
class Raw:
    """A JSON value spliced in as text (and its query text)."""

    json_text: str
    query_text: str | None


@dataclass(frozen=True)
class Case:
    """One request as bytes on the wire."""

    name: str
    protocol: str  # "json" or "query": the protocol the answer must be in
    method: str
    path: str  # percent-encoded
    body: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict)
    action: str | None = None


@dataclass(frozen=True)
class World:
    """What the valid requests refer to, made on the server before the corpus runs."""

    queue_url: str
    fifo_url: str
    dead_letter_arn: str
    source_arn: str
    receipt: str
    task_handle: str


# --- the valid requests ---------------------------------------------------------------


def valid_requests(world: World) -> dict[str, dict[str, Any]]:
    """One valid request per action, in the JSON shape."""
    url = world.queue_url
    attribute = {"DataType": "String", "StringValue": "v"}
    trace = {"AWSTraceHeader": {"DataType": "String", "StringValue": "Root=1-5-a"}}
    entry = {
        "Id": "e1", "MessageBody": "b", "DelaySeconds": 0,
        "MessageAttributes": {"a": attribute}, "MessageSystemAttributes": trace,
    }
    return {
        "AddPermission": {
            "QueueUrl": url, "Label": "l", "AWSAccountIds": ["111122223333"],
            "Actions": ["SendMessage"],
        },
        "CancelMessageMoveTask": {"TaskHandle": world.task_handle},
        "ChangeMessageVisibility": {
            "QueueUrl": url, "ReceiptHandle": world.receipt, "VisibilityTimeout": 5,
        },
        "ChangeMessageVisibilityBatch": {
            "QueueUrl": url,
            "Entries": [{"Id": "e1", "ReceiptHandle": world.receipt, "VisibilityTimeout": 5}],
        },
        "CreateQueue": {
            "QueueName": "corpus-made",
            "Attributes": {"DelaySeconds": "0", "Policy": "{}", "KmsMasterKeyId": "k"},
            "tags": {"team": "a"},
        },
        "DeleteMessage": {"QueueUrl": url, "ReceiptHandle": world.receipt},
        "DeleteMessageBatch": {
            "QueueUrl": url, "Entries": [{"Id": "e1", "ReceiptHandle": world.receipt}],
        },
        "DeleteQueue": {"QueueUrl": url},
        "GetQueueAttributes": {"QueueUrl": url, "AttributeNames": ["All"]},
        "GetQueueUrl": {"QueueName": "corpus", "QueueOwnerAWSAccountId": ACCOUNT},
        "ListDeadLetterSourceQueues": {"QueueUrl": url, "NextToken": "x", "MaxResults": 5},
        "ListMessageMoveTasks": {"SourceArn": world.dead_letter_arn, "MaxResults": 5},
        "ListQueueTags": {"QueueUrl": url},
        "ListQueues": {"QueueNamePrefix": "c", "NextToken": "x", "MaxResults": 5},
        "PurgeQueue": {"QueueUrl": world.fifo_url},
        "ReceiveMessage": {
            "QueueUrl": url, "AttributeNames": ["All"], "MessageAttributeNames": ["All"],
            "MaxNumberOfMessages": 1, "VisibilityTimeout": 0, "WaitTimeSeconds": 0,
            "ReceiveRequestAttemptId": "r", "MessageSystemAttributeNames": ["All"],
        },
        "RemovePermission": {"QueueUrl": url, "Label": "l"},
        "SendMessage": {
            "QueueUrl": url, "MessageBody": "b", "DelaySeconds": 0,
            "MessageAttributes": {"a": attribute}, "MessageSystemAttributes": trace,
            "MessageDeduplicationId": "d", "MessageGroupId": "g",
        },
        "SendMessageBatch": {"QueueUrl": url, "Entries": [entry]},
        "SetQueueAttributes": {
            "QueueUrl": url,
            "Attributes": {
                "VisibilityTimeout": "30", "MaximumMessageSize": "2048",
                "MessageRetentionPeriod": "600", "DelaySeconds": "0",
                "ReceiveMessageWaitTimeSeconds": "0",
                "RedrivePolicy": json.dumps(
                    {"deadLetterTargetArn": world.dead_letter_arn, "maxReceiveCount": 5}
                ),
                "Policy": "{}", "RedriveAllowPolicy": '{"redrivePermission":"allowAll"}',
                "KmsMasterKeyId": "k", "KmsDataKeyReusePeriodSeconds": "300",
                "Hopper.MaximumQueueDepth": "0",
            },
        },
        "StartMessageMoveTask": {
            "SourceArn": world.dead_letter_arn, "DestinationArn": world.source_arn,
            "MaxNumberOfMessagesPerSecond": 5,
        },
        "TagQueue": {"QueueUrl": url, "Tags": {"team": "a"}},
        "UntagQueue": {"QueueUrl": url, "TagKeys": ["team"]},
    }


# --- mutation -------------------------------------------------------------------------

Path = tuple[Any, ...]  # keys and indices; ("key", name) marks a map key itself
_MAPS = frozenset({"Attributes", "tags", "Tags", "MessageAttributes", "MessageSystemAttributes"})


def _paths(value: Any, prefix: Path = ()) -> Iterator[Path]:
    """Every place in `value` a hostile value can go: each member, map key, element."""
    if isinstance(value, dict):
        for name, item in value.items():
            yield (*prefix, name)
            if prefix and prefix[-1] in _MAPS:  # a map's keys are input too
                yield (*prefix, ("key", name))
            yield from _paths(item, (*prefix, name))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield (*prefix, index)
            yield from _paths(item, (*prefix, index))


def _replaced(value: Any, path: Path, new: Any) -> Any:
    head, rest = path[0], path[1:]
    if isinstance(value, list):
        copy = list(value)
        copy[head] = new if not rest else _replaced(copy[head], rest, new)
        return copy
    if isinstance(head, tuple):  # replace a map key
        return {(new if name == head[1] else name): item for name, item in value.items()}
    copy = dict(value)
    copy[head] = new if not rest else _replaced(copy[head], rest, new)
    return copy


def mutations(world: World) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(action, case name, params) for every valid request with one member replaced."""
    for action, params in valid_requests(world).items():
        for path in _paths(params):
            where = ".".join(str(p[1] if isinstance(p, tuple) else p) for p in path)
            for hostile in HOSTILE:
                new = Raw(hostile.json_text, hostile.query_text)
                if isinstance(path[-1], tuple):
                    if hostile.query_text is None:
                        continue  # a map key is text in both protocols
                    new = hostile.query_text
                yield action, f"{action}:{where}={hostile.label}", _replaced(params, path, new)


# --- encoding -------------------------------------------------------------------------


def json_text(value: Any) -> str:
    if isinstance(value, Raw):
        return value.json_text
    if isinstance(value, dict):
        return "{" + ",".join(
            f"{_string(str(k))}:{json_text(v)}" for k, v in value.items()
        ) + "}"
    if isinstance(value, list):
        return "[" + ",".join(json_text(v) for v in value) + "]"
    return json.dumps(value)


def json_case(name: str, action: str, params: dict[str, Any]) -> Case:
    body = json_text(params).encode("utf-8")
    headers = {"Content-Type": JSON_TYPE, "X-Amz-Target": f"AmazonSQS.{action}"}
    return Case(name, "json", "POST", "/", body, headers, action)


def query_fields(action: str, params: dict[str, Any]) -> list[tuple[str, str]] | None:
    """The flattened form of `params` by the action's query names; None when a value
    has no query spelling."""
    fields: list[tuple[str, str]] = [("Action", action), ("Version", "2012-11-05")]
    try:
        _flatten(INPUTS[action], params, "", fields)
    except _NoQuerySpelling:
        return None
    return fields


class _NoQuerySpelling(Exception):
    pass


def _flatten(
    members: Mapping[str, tuple[str, Any]], value: Any, prefix: str, out: list[tuple[str, str]]
) -> None:
    if not isinstance(value, dict):
        raise _NoQuerySpelling
    for member, item in value.items():
        name, node = members[member]
        _flatten_node(node, item, prefix + name, out)


def _flatten_node(node: Any, value: Any, key: str, out: list[tuple[str, str]]) -> None:
    if isinstance(value, Raw):
        if value.query_text is None or not isinstance(node, str):
            raise _NoQuerySpelling
        out.append((key, value.query_text))
    elif isinstance(node, str):
        out.append((key, value if isinstance(value, str) else json.dumps(value)))
    elif "structure" in node:
        _flatten(node["structure"], value, key + ".", out)
    elif "list" in node:
        if not isinstance(value, list):
            raise _NoQuerySpelling
        base = f"{key}.{node['member']}" if "member" in node else key
        for index, item in enumerate(value, start=1):
            _flatten_node(node["list"], item, f"{base}.{index}", out)
    else:
        if not isinstance(value, dict):
            raise _NoQuerySpelling
        base = f"{key}.{node['entry']}" if "entry" in node else key
        for index, (name, item) in enumerate(value.items(), start=1):
            out.append((f"{base}.{index}.{node['key']}", name))
            _flatten_node(node["map"], item, f"{base}.{index}.{node['value']}", out)


def form(fields: list[tuple[str, str]]) -> bytes:
    # Lone surrogates go out as the bytes they would be (invalid UTF-8), as a careless
    # client's encoder sends them.
    return "&".join(
        f"{_quote(name)}={_quote(value)}" for name, value in fields
    ).encode("ascii")


def _quote(text: str) -> str:
    return quote(text.encode("utf-8", "surrogatepass"), safe="")


def query_case(name: str, action: str, fields: list[tuple[str, str]], *, path: str = "/") -> Case:
    return Case(name, "query", "POST", path, form(fields), {"Content-Type": FORM_TYPE}, action)


# --- the corpus -----------------------------------------------------------------------


def corpus(world: World) -> list[Case]:
    cases: list[Case] = []
    for action, name, params in mutations(world):
        cases.append(json_case("json " + name, action, params))
        fields = query_fields(action, params)
        if fields is not None:
            cases.append(query_case("query " + name, action, fields))
    cases.extend(hand_made(world))
    return cases


def _handle(*fields: str) -> str:
    record = "\x1f".join(fields).encode("utf-8", "surrogatepass")
    return base64.urlsafe_b64encode(record).decode("ascii").rstrip("=")


def _task_handle(document: str) -> str:
    return base64.b64encode(document.encode("utf-8", "surrogatepass")).decode("ascii")


def hand_made(world: World) -> list[Case]:
    """What one member swap cannot say."""
    queue_path = world.queue_url.split("/", 3)[3]
    receipts = {
        "huge-token": _handle("1", ACCOUNT, "corpus", "m", "9" * 5_000),
        "superscript-token": _handle("1", ACCOUNT, "corpus", "m", "²"),
        "nul-message-id": _handle("1", ACCOUNT, "corpus", "m\x00", "1"),
        "surrogate-message-id": _handle("1", ACCOUNT, "corpus", "m\ud800", "1"),
        "long-message-id": _handle("1", ACCOUNT, "corpus", "m" * 5_000, "1"),
    }
    tasks = {
        "deep": _task_handle("[" * DEEP + "]" * DEEP),
        "deep-object": _task_handle('{"a":' * DEEP + "1" + "}" * DEEP),
        "nul-id": _task_handle(json.dumps(
            {"taskId": "\x00", "sourceArn": world.dead_letter_arn}
        )),
        "surrogate-arn": _task_handle(json.dumps(
            {"taskId": "t", "sourceArn": "arn:aws:sqs:us-east-1:" + ACCOUNT + ":\ud800"}
        )),
    }
    cases: list[Case] = []
    for label, handle in receipts.items():
        for action in ("DeleteMessage", "ChangeMessageVisibility"):
            params = {"QueueUrl": world.queue_url, "ReceiptHandle": handle}
            if action == "ChangeMessageVisibility":
                params["VisibilityTimeout"] = 1
            cases.append(json_case(f"json {action} receipt {label}", action, params))
            fields = query_fields(action, params)
            assert fields is not None
            cases.append(query_case(f"query {action} receipt {label}", action, fields))
    for label, handle in tasks.items():
        params = {"TaskHandle": handle}
        cases.append(json_case(f"json task handle {label}", "CancelMessageMoveTask", params))
        fields = query_fields("CancelMessageMoveTask", params)
        assert fields is not None
        cases.append(query_case(f"query task handle {label}", "CancelMessageMoveTask", fields))
    for label, path in _paths_on_the_wire(queue_path).items():
        for action in ("SendMessage", "GetQueueAttributes"):
            params = {"MessageBody": "b"} if action == "SendMessage" else {}
            cases.append(Case(
                f"json path {label} {action}", "json", "POST", path,
                json_text(params).encode(),
                {"Content-Type": JSON_TYPE, "X-Amz-Target": f"AmazonSQS.{action}"}, action,
            ))
            fields = query_fields(action, params)
            assert fields is not None
            cases.append(query_case(f"query path {label} {action}", action, fields, path=path))
    cases.extend(_query_oddities(world))
    cases.extend(_json_oddities())
    return cases


def _paths_on_the_wire(queue_path: str) -> dict[str, str]:
    return {
        "nul-name": f"/{ACCOUNT}/fz%00",
        "surrogate-name": f"/{ACCOUNT}/fz%ED%A0%80",
        "control-name": f"/{ACCOUNT}/fz%01",
        "nul-account": "/%00/q",
        "long-name": f"/{ACCOUNT}/" + "q" * 5_000,
        "encoded-slash": f"/{ACCOUNT}/a%2Fb",
        "extra-segment": f"/{ACCOUNT}/q/extra",
        "double-slash": "//",
    }


def _query_oddities(world: World) -> list[Case]:
    url = world.queue_url
    odd: dict[str, list[tuple[str, str]]] = {
        "superscript-list-index": [("QueueUrl", url), ("AttributeName.²", "All")],
        "huge-list-index": [("QueueUrl", url), ("AttributeName." + "9" * 5_000, "All")],
        "arabic-list-index": [("QueueUrl", url), ("AttributeName.٣", "All")],
        "negative-list-index": [("QueueUrl", url), ("AttributeName.-1", "All")],
        "nul-action": [],
        "nul-in-name": [("QueueUrl\x00", url)],
    }
    cases = [
        query_case(
            f"query {label}", "GetQueueAttributes",
            [("Action", "GetQueueAttributes"), ("Version", "2012-11-05"), *fields],
        )
        for label, fields in odd.items()
        if label != "nul-action"
    ]
    for label, action in {"nul-action": "\x00", "control-action": "\x01x",
                          "surrogate-action": "\ud800", "long-action": "A" * 9_000}.items():
        cases.append(query_case(f"query {label}", action, [("Action", action)]))
    cases.append(query_case(
        "query get-queue-url nul", "GetQueueUrl",
        [("Action", "GetQueueUrl"), ("QueueName", "a\x00")],
    ))
    cases.append(Case(
        "query GET with nul", "query", "GET",
        "/?Action=GetQueueUrl&QueueName=a%00", b"", {}, "GetQueueUrl",
    ))
    return cases


def _json_oddities() -> list[Case]:
    bodies = {
        "deep-array-body": b"[" * DEEP + b"]" * DEEP,
        "deep-object-body": b'{"a":' * DEEP + b"1" + b"}" * DEEP,
        "deep-member": b'{"QueueName":' + b"[" * DEEP + b"]" * DEEP + b"}",
        "huge-integer-member": b'{"MaxResults":' + b"9" * 5_000 + b"}",
        "float-past-range": b'{"MaxResults":1e400}',
        "nan": b'{"MaxResults":NaN}',
        "not-utf8": b'{"QueueName":"\xff"}',
        "array": b"[]",
        "string": b'"x"',
        "truncated": b'{"QueueName":',
        "lone-surrogate-key": b'{"\\ud800":1}',
    }
    return [
        Case(
            f"json {label}", "json", "POST", "/", body,
            {"Content-Type": JSON_TYPE, "X-Amz-Target": "AmazonSQS.ListQueues"}, "ListQueues",
        )
        for label, body in bodies.items()
    ]


DASHBOARD_QUERIES = [
    "/dashboard/api/queues/%00/q/messages",
    f"/dashboard/api/queues/{ACCOUNT}/%00/messages",
    f"/dashboard/api/queues/{ACCOUNT}/%ED%A0%80",
    f"/dashboard/api/queues/{ACCOUNT}/%ED%A0%80/messages",
    f"/dashboard/api/queues/{ACCOUNT}/" + "q" * 5_000,
    f"/dashboard/api/queues/{ACCOUNT}/corpus%01/messages",
]


# --- what a well-formed answer is ----------------------------------------------------


def malformation(case: Case, status: int, content_type: str, headers: Mapping[str, str],
                 body: bytes) -> str | None:
    """What is wrong with an answer to `case`, or None when it is a well-formed SQS
    answer of the case's protocol (never a 5xx)."""
    if status >= 500:
        return f"status {status}"
    if case.protocol == "json":
        return _json_malformation(status, content_type, headers, body)
    return _xml_malformation(case, status, content_type, body)


def _json_malformation(
    status: int, content_type: str, headers: Mapping[str, str], body: bytes
) -> str | None:
    if content_type != JSON_TYPE:
        return f"content type {content_type!r}"
    try:
        document = json.loads(body)
    except ValueError:
        return "a body that is not JSON"
    if not isinstance(document, dict):
        return "a JSON body that is not an object"
    if status >= 400:
        if not isinstance(document.get("__type"), str) or "message" not in document:
            return "an error without __type and message"
        query_error = headers.get("x-amzn-query-error", "")
        if query_error.count(";") != 1 or not query_error.endswith((";Sender", ";Receiver")):
            return f"x-amzn-query-error {query_error!r}"
    return None


def _xml_malformation(case: Case, status: int, content_type: str, body: bytes) -> str | None:
    if content_type != "text/xml":
        return f"content type {content_type!r}"
    try:
        root = ElementTree.fromstring(body)
    except ElementTree.ParseError as error:
        return f"XML that does not parse ({error})"
    namespace = "{http://queue.amazonaws.com/doc/2012-11-05/}"
    if status >= 400:
        if root.tag not in (f"{namespace}ErrorResponse", "UnknownOperationException"):
            return f"an error rooted at {root.tag}"
        code = root.find(f"{namespace}Error/{namespace}Code")
        if root.tag.endswith("ErrorResponse") and code is None:
            return "an error without a Code"
    elif root.tag != f"{namespace}{case.action}Response":
        return f"an answer rooted at {root.tag}"
    return None
