"""Hostile input against a live server on each store, in both protocols (issue 16, items
3 to 6 and 9): a batch validated entry by entry before anything is stored, client
faults answered as SQS 400s rather than 500/503, values outside SQS's characters
refused on the way in, every XML answer well-formed, and policies held to AWS's quotas.
The generated corpus (test_bad_input_corpus.py) sweeps the same ground wholesale; these
pin each defect by name."""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Iterator
from typing import Any
from xml.etree import ElementTree

import httpx
import pytest
from botocore.exceptions import ClientError

from .query_client import QueryClient, flatten, listed, path_of

JSON_TYPE = "application/x-amz-json-1.0"
DEEP = 1_000
HUGE = "9" * 4_400  # past int()'s 4,300-digit limit
POLICY_ARN = "arn:aws:sqs:us-east-1:000000000000:q"


def unique(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def query(endpoint: str) -> Iterator[QueryClient]:
    with QueryClient(endpoint) as client:
        yield client


def json_call(endpoint: str, action: str, body: str) -> httpx.Response:
    """A JSON-protocol request whose body is exactly `body` (boto3 would refuse to send
    most of what these tests send)."""
    headers = {"Content-Type": JSON_TYPE, "X-Amz-Target": f"AmazonSQS.{action}"}
    return httpx.post(endpoint, content=body.encode("utf-8"), headers=headers)


def json_code(response: httpx.Response) -> str:
    assert response.status_code == 400, response.text
    return response.headers["x-amzn-query-error"].split(";")[0]


def query_code(response: Any) -> str:
    assert response.status == 400, response.text
    ElementTree.fromstring(response.text)  # well-formed
    return str(response.error["Code"])


def queue(sqs, **attributes: str) -> str:
    return str(sqs.create_queue(QueueName=unique("hostile"), Attributes=attributes)["QueueUrl"])


def depth(sqs, url: str) -> int:
    attributes = sqs.get_queue_attributes(
        QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"]
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"])


# --- item 3: a batch is validated entry by entry before anything is stored ----------


def _trace(text: str) -> dict[str, Any]:
    return {"AWSTraceHeader": {"DataType": "String", "StringValue": text}}


def test_a_batch_entry_with_a_lone_surrogate_trace_header_fails_alone_over_json(sqs):
    url = queue(sqs)
    entries: list[dict[str, Any]] = [
        {"Id": f"e{i}", "MessageBody": f"m{i}", "MessageSystemAttributes": _trace("Root=1-a")}
        for i in range(10)
    ]
    entries[4]["MessageSystemAttributes"] = _trace("Root=\ud800")

    answer = sqs.send_message_batch(QueueUrl=url, Entries=entries)

    assert [f["Id"] for f in answer["Failed"]] == ["e4"]
    assert answer["Failed"][0]["Code"] == "InvalidMessageContents"
    assert answer["Failed"][0]["SenderFault"] is True
    assert len(answer["Successful"]) == 9
    assert depth(sqs, url) == 9


def test_a_batch_entry_with_a_control_character_trace_header_fails_alone_over_query(
    sqs, query
):
    url = queue(sqs)
    entries = [
        {"Id": f"e{i}", "MessageBody": f"m{i}",
         "MessageSystemAttribute": {"AWSTraceHeader": {"DataType": "String",
                                                       "StringValue": "Root=1-a"}}}
        for i in range(10)
    ]
    entries[7]["MessageSystemAttribute"]["AWSTraceHeader"]["StringValue"] = "Root=\x01"

    answer = query.call(
        "SendMessageBatch", flatten("SendMessageBatchRequestEntry", entries), path=path_of(url)
    )

    assert answer.status == 200, answer.text
    failed = listed(answer.result.get("BatchResultErrorEntry"))
    assert [(f["Id"], f["Code"]) for f in failed] == [("e7", "InvalidMessageContents")]
    assert len(listed(answer.result.get("SendMessageBatchResultEntry"))) == 9
    assert depth(sqs, url) == 9


def test_a_batch_entry_with_a_lone_surrogate_data_type_fails_alone(sqs):
    url = queue(sqs)
    good = {"DataType": "String.x", "StringValue": "v"}
    entries = [
        {"Id": "good", "MessageBody": "m", "MessageAttributes": {"a": good}},
        {"Id": "bad", "MessageBody": "m",
         "MessageAttributes": {"a": {"DataType": "String.\ud800", "StringValue": "v"}}},
    ]

    answer = sqs.send_message_batch(QueueUrl=url, Entries=entries)

    assert [(f["Id"], f["Code"]) for f in answer["Failed"]] == [("bad", "InvalidParameterValue")]
    assert depth(sqs, url) == 1


# --- item 4: client faults are SQS 400s of the right code ---------------------------


@pytest.mark.parametrize(
    ("member", "literal"),
    [
        ("VisibilityTimeout", "1" + "0" * 400),
        ("WaitTimeSeconds", "1e400"),
        ("MaxNumberOfMessages", "-1" + "0" * 400),
        ("VisibilityTimeout", "1e300"),
    ],
)
def test_a_json_number_past_any_integer_is_an_invalid_parameter_value(
    sqs, endpoint, member, literal
):
    url = queue(sqs)
    answer = json_call(endpoint, "ReceiveMessage", f'{{"QueueUrl":"{url}","{member}":{literal}}}')
    assert json_code(answer) == "InvalidParameterValue"


def test_a_delay_past_any_integer_is_an_invalid_parameter_value_in_both_protocols(
    sqs, endpoint, query
):
    url = queue(sqs)
    body = f'{{"QueueUrl":"{url}","MessageBody":"b","DelaySeconds":1{"0" * 400}}}'
    assert json_code(json_call(endpoint, "SendMessage", body)) == "InvalidParameterValue"
    answer = query.call("SendMessage", {"MessageBody": "b", "DelaySeconds": HUGE},
                        path=path_of(url))
    assert query_code(answer) == "InvalidParameterValue"
    assert depth(sqs, url) == 0


@pytest.mark.parametrize("text", [HUGE, "²", "-" + HUGE])
def test_an_integer_attribute_of_thousands_of_digits_or_foreign_digits_is_invalid(
    sqs, query, text
):
    with pytest.raises(ClientError) as raised:
        sqs.create_queue(QueueName=unique("q"), Attributes={"DelaySeconds": text})
    assert raised.value.response["Error"]["Code"] == "InvalidAttributeValue"
    answer = query.call("CreateQueue", {
        "QueueName": unique("q"), **flatten("Attribute", {"VisibilityTimeout": text}),
    })
    assert query_code(answer) == "InvalidAttributeValue"


@pytest.mark.parametrize("text", ["²", HUGE])
def test_a_count_of_foreign_or_thousands_of_digits_is_an_invalid_parameter_value(
    sqs, query, text
):
    url = queue(sqs)
    answer = query.call("ReceiveMessage", {"MaxNumberOfMessages": text}, path=path_of(url))
    assert query_code(answer) == "InvalidParameterValue"


def test_a_superscript_list_index_is_not_a_server_error(sqs, query):
    url = queue(sqs)
    answer = query.call("GetQueueAttributes", {"AttributeName.²": "All"}, path=path_of(url))
    assert answer.status < 500
    ElementTree.fromstring(answer.text)


def _receipt(*fields: str) -> str:
    record = "\x1f".join(fields).encode("utf-8", "surrogatepass")
    return base64.urlsafe_b64encode(record).decode("ascii").rstrip("=")


@pytest.mark.parametrize(
    "fields",
    [
        ("m", HUGE),  # a token past int()'s digit limit
        ("m", "²"),
        ("m\x00", "1"),  # NUL would reach the store (PostgreSQL refuses it: 503)
        ("m\ud800", "1"),
    ],
)
def test_a_forged_receipt_is_receipt_handle_is_invalid(sqs, query, fields):
    url = queue(sqs)
    name = url.rsplit("/", 1)[1]
    handle = _receipt("1", "000000000000", name, *fields)
    with pytest.raises(ClientError) as raised:
        sqs.delete_message(QueueUrl=url, ReceiptHandle=handle)
    assert raised.value.response["Error"]["Code"] == "ReceiptHandleIsInvalid"
    answer = query.call(
        "ChangeMessageVisibility", {"ReceiptHandle": handle, "VisibilityTimeout": "1"},
        path=path_of(url),
    )
    assert query_code(answer) == "ReceiptHandleIsInvalid"


def test_a_json_body_nested_a_thousand_deep_is_a_serialization_error(endpoint):
    answer = json_call(endpoint, "ListQueues", '{"a":' * DEEP + "1" + "}" * DEEP)
    assert answer.status_code == 400
    assert answer.json()["__type"].endswith("SerializationException")


@pytest.mark.parametrize(
    ("attribute", "code"),
    [
        ("Policy", "InvalidAttributeValue"),
        ("RedrivePolicy", "InvalidParameterValue"),
        ("RedriveAllowPolicy", "InvalidParameterValue"),
    ],
)
def test_a_policy_text_nested_a_thousand_deep_is_refused(sqs, query, attribute, code):
    url = queue(sqs)
    deep = "[" * DEEP + "]" * DEEP
    with pytest.raises(ClientError) as raised:
        sqs.set_queue_attributes(QueueUrl=url, Attributes={attribute: deep})
    assert raised.value.response["Error"]["Code"] == code
    answer = query.call(
        "SetQueueAttributes", flatten("Attribute", {attribute: deep}), path=path_of(url)
    )
    assert query_code(answer) == code


def test_a_task_handle_nested_a_thousand_deep_is_an_invalid_parameter_value(sqs, query):
    handle = base64.b64encode(b"[" * DEEP + b"]" * DEEP).decode()
    with pytest.raises(ClientError) as raised:
        sqs.cancel_message_move_task(TaskHandle=handle)
    assert raised.value.response["Error"]["Code"] == "InvalidParameterValue"
    assert query_code(query.call("CancelMessageMoveTask", {"TaskHandle": handle})) == (
        "InvalidParameterValue"
    )


@pytest.mark.parametrize("name", ["a\x00", "a\ud800", "a\x01"])
def test_get_queue_url_of_a_name_with_a_control_character_is_an_invalid_parameter_value(
    sqs, query, name
):
    with pytest.raises(ClientError) as raised:
        sqs.get_queue_url(QueueName=name)
    assert raised.value.response["Error"]["Code"] == "InvalidParameterValue"
    if name != "a\ud800":  # (not UTF-8: the query protocol cannot carry it)
        assert query_code(query.call("GetQueueUrl", {"QueueName": name})) == (
            "InvalidParameterValue"
        )


@pytest.mark.parametrize("name", ["q" * 5_000, "a b", "a/b"])
def test_get_queue_url_of_a_name_no_queue_can_have_is_queue_does_not_exist(sqs, name):
    with pytest.raises(ClientError) as raised:
        sqs.get_queue_url(QueueName=name)
    assert raised.value.response["Error"]["Code"] == "AWS.SimpleQueueService.NonExistentQueue"


@pytest.mark.parametrize("path", ["/000000000000/fz%00", "/000000000000/fz%01"])
def test_a_queue_path_with_a_control_character_names_no_queue(endpoint, path):
    headers = {"Content-Type": JSON_TYPE, "X-Amz-Target": "AmazonSQS.SendMessage"}
    answer = httpx.post(endpoint + path, content=b'{"MessageBody":"b"}', headers=headers)
    assert json_code(answer) == "AWS.SimpleQueueService.NonExistentQueue"
    answer = httpx.post(endpoint + path, data={"Action": "SendMessage", "MessageBody": "b"})
    assert answer.status_code == 400
    ElementTree.fromstring(answer.text)


@pytest.mark.parametrize("field", ["account", "queue"])
def test_the_console_refuses_a_nul_in_its_paths(endpoint, field):
    names = {"account": "000000000000", "queue": "q", field: "a%00"}
    answer = httpx.get(endpoint + "/dashboard/api/queues/{account}/{queue}".format(**names))
    assert answer.status_code == 400
    assert "error" in answer.json()


# --- item 5: values outside SQS's characters are refused on the way in --------------


@pytest.mark.parametrize("text", ["a\x01b", "a\ud800b", "a\x00b"])
def test_a_tag_outside_the_allowed_characters_is_refused_and_never_stored(sqs, query, text):
    url = queue(sqs)
    for tags in ({"team": text}, {text: "v"}):
        with pytest.raises(ClientError) as raised:
            sqs.tag_queue(QueueUrl=url, Tags=tags)
        assert raised.value.response["Error"]["Code"] == "InvalidParameterValue"
    answer = query.call("ListQueueTags", {}, path=path_of(url))
    assert answer.status == 200
    ElementTree.fromstring(answer.text)
    assert not (answer.result or {}).get("Tag")


@pytest.mark.parametrize("text", ["k\x01", "k\ud800"])
def test_a_kms_master_key_id_outside_the_allowed_characters_is_refused(sqs, query, text):
    url = queue(sqs)
    with pytest.raises(ClientError) as raised:
        sqs.set_queue_attributes(QueueUrl=url, Attributes={"KmsMasterKeyId": text})
    assert raised.value.response["Error"]["Code"] in ("InvalidAttributeValue",
                                                      "InvalidParameterValue")
    answer = query.call("GetQueueAttributes", {"AttributeName.1": "All"}, path=path_of(url))
    assert answer.status == 200
    ElementTree.fromstring(answer.text)


def test_a_trace_header_with_a_control_character_is_refused_and_never_delivered(sqs, query):
    url = queue(sqs)
    with pytest.raises(ClientError) as raised:
        sqs.send_message(
            QueueUrl=url, MessageBody="b", MessageSystemAttributes=_trace("Root=\x01")
        )
    assert raised.value.response["Error"]["Code"] == "InvalidMessageContents"
    assert depth(sqs, url) == 0


# --- item 6: every XML answer is well-formed ----------------------------------------


@pytest.mark.parametrize("label", ["\x00", "a\x01b", "\x1f"])
def test_an_error_that_quotes_a_control_character_is_well_formed_xml(sqs, query, label):
    url = queue(sqs)
    answer = query.call(
        "AddPermission",
        {"Label": label, "AWSAccountId.1": "111122223333", "ActionName.1": "SendMessage"},
        path=path_of(url),
    )
    assert query_code(answer) == "InvalidParameterValue"


def test_an_unknown_action_of_control_characters_is_well_formed_xml(query):
    assert query_code(query.call("\x00\x01", {})) == "InvalidAction"


def test_a_batch_failure_that_quotes_input_is_well_formed_xml(sqs, query):
    url = queue(sqs)
    entries = [{"Id": "e1", "ReceiptHandle": "x", "VisibilityTimeout": "\x01"}]
    answer = query.call(
        "ChangeMessageVisibilityBatch",
        flatten("ChangeMessageVisibilityBatchRequestEntry", entries),
        path=path_of(url),
    )
    assert answer.status == 200, answer.text
    ElementTree.fromstring(answer.text)
    [failed] = listed(answer.result["BatchResultErrorEntry"])
    assert failed["Id"] == "e1"


# --- item 9: policies and other stored values are bounded ----------------------------


def _permission(sqs, url: str, label: str, accounts: list[str], actions=("SendMessage",)):
    sqs.add_permission(
        QueueUrl=url, Label=label, AWSAccountIds=accounts, Actions=list(actions)
    )


def test_add_permission_beyond_fifty_principals_is_over_limit(sqs, query):
    url = queue(sqs)
    _permission(sqs, url, "first", [f"{n:012d}" for n in range(30)])
    with pytest.raises(ClientError) as raised:
        _permission(sqs, url, "second", [f"{n:012d}" for n in range(30, 51)])
    assert raised.value.response["Error"]["Code"] == "OverLimit"
    accounts = {f"AWSAccountId.{n + 1}": f"{n:012d}" for n in range(60)}
    answer = query.call(
        "AddPermission", {"Label": "third", **accounts, "ActionName.1": "SendMessage"},
        path=path_of(url),
    )
    assert answer.status == 403
    assert answer.error["Code"] == "OverLimit"
    policy = json.loads(sqs.get_queue_attributes(
        QueueUrl=url, AttributeNames=["Policy"])["Attributes"]["Policy"])
    assert [s["Sid"] for s in policy["Statement"]] == ["first"]


def test_add_permission_beyond_twenty_statements_is_over_limit(sqs):
    url = queue(sqs)
    for n in range(20):
        _permission(sqs, url, f"l{n}", ["111122223333"])
    with pytest.raises(ClientError) as raised:
        _permission(sqs, url, "l20", ["111122223333"])
    assert raised.value.response["Error"]["Code"] == "OverLimit"


def _policy(statements: int = 1, actions: int = 1, conditions: int = 0, pad: int = 0) -> str:
    statement = {
        "Effect": "Allow", "Principal": "*", "Resource": POLICY_ARN,
        "Action": [f"SQS:A{n}" for n in range(actions)],
    }
    if conditions:
        statement["Condition"] = {"StringEquals": {f"aws:k{n}": "v" for n in range(conditions)}}
    document = {"Version": "2012-10-17", "Statement": [
        {**statement, "Sid": f"s{n}"} for n in range(statements)
    ]}
    if pad:
        document["Id"] = "x" * pad
    return json.dumps(document)


# The padding that makes a policy exactly 8,192 bytes long.
_PAD_TO_LIMIT = 8_192 - len(_policy(pad=1)) + 1


@pytest.mark.parametrize(
    ("fits", "too_much"),
    [
        (_policy(statements=20), _policy(statements=21)),
        (_policy(actions=7), _policy(actions=8)),
        (_policy(conditions=10), _policy(conditions=11)),
        (_policy(pad=_PAD_TO_LIMIT), _policy(pad=_PAD_TO_LIMIT + 1)),
    ],
    ids=["statements", "actions", "conditions", "bytes"],
)
def test_a_policy_attribute_is_held_to_aws_quotas(sqs, query, fits, too_much):
    url = queue(sqs)
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": fits})
    with pytest.raises(ClientError) as raised:
        sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": too_much})
    assert raised.value.response["Error"]["Code"] == "InvalidAttributeValue"
    answer = query.call("SetQueueAttributes", flatten("Attribute", {"Policy": too_much}),
                        path=path_of(url))
    assert query_code(answer) == "InvalidAttributeValue"


def test_a_kms_master_key_id_longer_than_a_policy_may_be_is_refused(sqs):
    with pytest.raises(ClientError) as raised:
        queue(sqs, KmsMasterKeyId="k" * 8_193)
    assert raised.value.response["Error"]["Code"] == "InvalidAttributeValue"
