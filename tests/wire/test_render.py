"""Encoding results and errors in both SQS protocols."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree

import xmltodict

from hopper.wire import render_json, render_xml
from hopper.wire.errors import SqsError

NS = "{http://queue.amazonaws.com/doc/2012-11-05/}"
NOT_FOUND = SqsError(
    "QueueDoesNotExist",
    "The specified queue does not exist.",
    query_message="The specified queue does not exist for this wsdl version.",
)


def xml_of(rendered) -> dict:
    return xmltodict.parse(rendered.body, force_list=None)


# --- JSON ---------------------------------------------------------------------------


def test_json_result_is_the_result_dict_with_bytes_as_base64():
    result = {"Messages": [{"Body": "b", "MessageAttributes": {
        "x": {"DataType": "Binary", "BinaryValue": b"\x00\xff"}}}]}
    rendered = render_json.render_result(result, "rid")
    assert rendered.status == 200
    assert rendered.content_type == "application/x-amz-json-1.0"
    assert rendered.headers["x-amzn-RequestId"] == "rid"
    body = json.loads(rendered.body)
    assert body["Messages"][0]["MessageAttributes"]["x"]["BinaryValue"] == "AP8="


def test_json_error_has_type_message_status_and_query_error_header():
    rendered = render_json.render_error(NOT_FOUND, "rid")
    assert rendered.status == 400
    assert json.loads(rendered.body) == {
        "__type": "com.amazonaws.sqs#QueueDoesNotExist",
        "message": "The specified queue does not exist.",
    }
    query_error = rendered.headers["x-amzn-query-error"]
    assert query_error == "AWS.SimpleQueueService.NonExistentQueue;Sender"
    assert rendered.headers["x-amzn-RequestId"] == "rid"


def test_json_error_of_the_server_is_a_receiver_fault():
    rendered = render_json.render_error(SqsError("InternalFailure", "oops"), "rid")
    assert rendered.status == 500
    assert rendered.headers["x-amzn-query-error"] == "InternalFailure;Receiver"


def test_json_error_status_follows_the_table():
    rendered = render_json.render_error(SqsError("PurgeQueueInProgress", "wait"), "rid")
    assert rendered.status == 403
    assert json.loads(rendered.body)["__type"] == "com.amazonaws.sqs#PurgeQueueInProgress"


# --- XML results --------------------------------------------------------------------------


def test_xml_result_is_wrapped_in_response_and_result_with_request_id():
    rendered = render_xml.render_result("CreateQueue", {"QueueUrl": "http://h/1/q"}, "rid")
    assert rendered.status == 200
    assert rendered.content_type == "text/xml"
    root = ElementTree.fromstring(rendered.body)
    assert root.tag == f"{NS}CreateQueueResponse"
    assert root.findtext(f"{NS}CreateQueueResult/{NS}QueueUrl") == "http://h/1/q"
    assert root.findtext(f"{NS}ResponseMetadata/{NS}RequestId") == "rid"


def test_xml_action_without_output_has_no_result_element():
    root = ElementTree.fromstring(render_xml.render_result("DeleteQueue", {}, "rid").body)
    assert [child.tag for child in root] == [f"{NS}ResponseMetadata"]


def test_xml_receive_with_no_messages_has_an_empty_result():
    root = ElementTree.fromstring(render_xml.render_result("ReceiveMessage", {}, "rid").body)
    result = root.find(f"{NS}ReceiveMessageResult")
    assert result is not None
    assert list(result) == []


def test_xml_messages_are_flattened_with_attribute_and_message_attribute_entries():
    message = {
        "MessageId": "m1", "ReceiptHandle": "r1", "MD5OfBody": "d", "Body": "hi",
        "Attributes": {"SentTimestamp": "1000", "ApproximateReceiveCount": "1"},
        "MD5OfMessageAttributes": "a",
        "MessageAttributes": {
            "s": {"DataType": "String", "StringValue": "v"},
            "b": {"DataType": "Binary", "BinaryValue": b"hi"},
        },
    }
    rendered = render_xml.render_result("ReceiveMessage", {"Messages": [message, message]}, "r")
    result = xml_of(rendered)["ReceiveMessageResponse"]["ReceiveMessageResult"]
    assert len(result["Message"]) == 2
    first = result["Message"][0]
    assert first["MessageId"] == "m1"
    assert first["Attribute"] == [
        {"Name": "SentTimestamp", "Value": "1000"},
        {"Name": "ApproximateReceiveCount", "Value": "1"},
    ]
    assert first["MessageAttribute"] == [
        {"Name": "s", "Value": {"StringValue": "v", "DataType": "String"}},
        {"Name": "b", "Value": {"BinaryValue": "aGk=", "DataType": "Binary"}},
    ]


def test_xml_queue_urls_repeat_the_queue_url_element():
    rendered = render_xml.render_result("ListQueues", {"QueueUrls": ["a", "b"]}, "rid")
    assert xml_of(rendered)["ListQueuesResponse"]["ListQueuesResult"]["QueueUrl"] == ["a", "b"]


def test_xml_queue_attributes_and_tags_are_name_value_and_key_value_entries():
    attributes = render_xml.render_result("GetQueueAttributes", {"Attributes": {"A": "1"}}, "r")
    tags = render_xml.render_result("ListQueueTags", {"Tags": {"k": "v"}}, "r")
    assert xml_of(attributes)["GetQueueAttributesResponse"]["GetQueueAttributesResult"] == {
        "Attribute": {"Name": "A", "Value": "1"}
    }
    assert xml_of(tags)["ListQueueTagsResponse"]["ListQueueTagsResult"] == {
        "Tag": {"Key": "k", "Value": "v"}
    }


def test_xml_batch_results_have_success_and_error_entries_with_boolean_text():
    result = {
        "Successful": [{"Id": "1", "MessageId": "m", "MD5OfMessageBody": "d"}],
        "Failed": [{"Id": "2", "SenderFault": True, "Code": "InvalidParameterValue",
                    "Message": "no"}],
    }
    rendered = render_xml.render_result("SendMessageBatch", result, "rid")
    body = xml_of(rendered)["SendMessageBatchResponse"]["SendMessageBatchResult"]
    assert body["SendMessageBatchResultEntry"] == {"Id": "1", "MessageId": "m",
                                                   "MD5OfMessageBody": "d"}
    assert body["BatchResultErrorEntry"] == {"Id": "2", "SenderFault": "true",
                                             "Code": "InvalidParameterValue", "Message": "no"}


def test_xml_keeps_carriage_returns_and_escapes_markup_in_text():
    message = {"MessageId": "m", "Body": "a\r\nb <&> \"'"}
    rendered = render_xml.render_result("ReceiveMessage", {"Messages": [message]}, "rid")
    root = ElementTree.fromstring(rendered.body)
    assert root.findtext(f"{NS}ReceiveMessageResult/{NS}Message/{NS}Body") == "a\r\nb <&> \"'"


def test_xml_numbers_are_decimal_text():
    rendered = render_xml.render_result(
        "CancelMessageMoveTask", {"ApproximateNumberOfMessagesMoved": 12}, "rid"
    )
    result = xml_of(rendered)["CancelMessageMoveTaskResponse"]["CancelMessageMoveTaskResult"]
    assert result == {"ApproximateNumberOfMessagesMoved": "12"}


# --- XML errors ---------------------------------------------------------------------------


def test_xml_error_has_type_code_query_message_detail_and_request_id():
    rendered = render_xml.render_error(NOT_FOUND, "rid")
    assert rendered.status == 400
    assert rendered.content_type == "text/xml"
    root = ElementTree.fromstring(rendered.body)
    assert root.tag == f"{NS}ErrorResponse"
    error = root.find(f"{NS}Error")
    tags = [child.tag.removeprefix(NS) for child in error]
    assert tags == ["Type", "Code", "Message", "Detail"]
    assert error.findtext(f"{NS}Type") == "Sender"
    assert error.findtext(f"{NS}Code") == "AWS.SimpleQueueService.NonExistentQueue"
    message = error.findtext(f"{NS}Message")
    assert message == "The specified queue does not exist for this wsdl version."
    assert error.findtext(f"{NS}Detail") == ""
    assert root.findtext(f"{NS}RequestId") == "rid"
    assert b"<Detail/>" in rendered.body


def test_xml_error_of_the_server_is_a_receiver_fault_with_its_status():
    rendered = render_xml.render_error(SqsError("OverLimit", "too many"), "rid")
    assert rendered.status == 403
    failure = render_xml.render_error(SqsError("InternalFailure", "oops"), "rid")
    assert failure.status == 500
    assert ElementTree.fromstring(failure.body).findtext(f"{NS}Error/{NS}Type") == "Receiver"


def test_an_error_quoting_characters_xml_cannot_carry_is_well_formed_in_both_protocols():
    error = SqsError("InvalidAction", "The action \x00\x01\ud800\uffff is not valid.")
    root = ElementTree.fromstring(render_xml.render_error(error, "r").body)
    message = root.find(f"{NS}Error/{NS}Message")
    assert message is not None
    assert message.text == "The action \ufffd\ufffd\ufffd\ufffd is not valid."
    assert json.loads(render_json.render_error(error, "r").body)["message"] == message.text
