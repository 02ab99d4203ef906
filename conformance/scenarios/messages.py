"""Messages: send (with attributes and their MD5s), receive, delay, purge, and limits."""

from __future__ import annotations

from conformance.registry import scenario
from conformance.target import Target

ATTRIBUTES = {
    "colour": {"DataType": "String", "StringValue": "blue"},
    "count": {"DataType": "Number", "StringValue": "42"},
    "ratio": {"DataType": "Number.float", "StringValue": "0.5"},
    "blob": {"DataType": "Binary", "BinaryValue": b"\x00\x01\xfe\xff"},
    "label": {"DataType": "String.custom", "StringValue": "héllo wörld"},
}


@scenario
def send_message_answers_the_md5_of_the_body(t: Target) -> list[dict]:
    url = t.create_queue()
    t.call("SendMessage", QueueUrl=url, MessageBody="hello")
    t.call("SendMessage", QueueUrl=url, MessageBody="ünïcödé ✓ 𝄞")
    return t.answers


@scenario
def send_message_with_attributes_answers_the_md5_of_the_attributes(t: Target) -> list[dict]:
    url = t.create_queue()
    t.call("SendMessage", QueueUrl=url, MessageBody="attributed", MessageAttributes=ATTRIBUTES)
    return t.answers


@scenario
def send_message_with_a_trace_header_answers_the_md5_of_system_attributes(t: Target) -> list[dict]:
    url = t.create_queue()
    trace = {"AWSTraceHeader": {"DataType": "String", "StringValue": "Root=1-5759e988-bd862e3fe"}}
    t.call("SendMessage", QueueUrl=url, MessageBody="traced", MessageSystemAttributes=trace)
    t.call("ReceiveMessage", QueueUrl=url, MessageSystemAttributeNames=["AWSTraceHeader"])
    return t.answers


@scenario
def receive_message_gives_the_body_md5s_and_attributes_asked_for(t: Target) -> list[dict]:
    url = t.create_queue()
    t.call("SendMessage", QueueUrl=url, MessageBody="attributed", MessageAttributes=ATTRIBUTES)
    t.call("ReceiveMessage", QueueUrl=url, MessageAttributeNames=["All"])
    return t.answers


@scenario
def receive_message_selects_message_attributes_by_name_and_prefix(t: Target) -> list[dict]:
    url = t.create_queue()
    t.call("SendMessage", QueueUrl=url, MessageBody="attributed", MessageAttributes=ATTRIBUTES)
    t.call("ReceiveMessage", QueueUrl=url, VisibilityTimeout=0,
           MessageAttributeNames=["colour", "co.*"])
    t.call("ReceiveMessage", QueueUrl=url, VisibilityTimeout=0,
           MessageAttributeNames=["nothing-like-it"])
    t.call("ReceiveMessage", QueueUrl=url)  # no names: no attributes, MD5 still given
    return t.answers


@scenario
def receive_message_selects_system_attributes_by_name(t: Target) -> list[dict]:
    url = t.create_queue()
    t.call("SendMessage", QueueUrl=url, MessageBody="plain")
    t.call("ReceiveMessage", QueueUrl=url, VisibilityTimeout=0,
           MessageSystemAttributeNames=["SentTimestamp", "ApproximateReceiveCount"])
    t.call("ReceiveMessage", QueueUrl=url, VisibilityTimeout=0,
           AttributeNames=["ApproximateFirstReceiveTimestamp", "SenderId"])
    return t.answers


@scenario
def receive_message_with_all_system_attributes(t: Target) -> list[dict]:
    url = t.create_queue()
    t.call("SendMessage", QueueUrl=url, MessageBody="plain")
    t.call("ReceiveMessage", QueueUrl=url, MessageSystemAttributeNames=["All"])
    return t.answers


@scenario
def receive_message_on_an_empty_queue_has_no_messages(t: Target) -> list[dict]:
    url = t.create_queue()
    t.call("ReceiveMessage", QueueUrl=url)
    t.call("ReceiveMessage", QueueUrl=url, WaitTimeSeconds=1)
    return t.answers


@scenario
def receive_count_grows_with_each_delivery(t: Target) -> list[dict]:
    url = t.create_queue()
    t.call("SendMessage", QueueUrl=url, MessageBody="again")
    for _ in range(3):
        t.call("ReceiveMessage", QueueUrl=url, VisibilityTimeout=0,
               MessageSystemAttributeNames=["ApproximateReceiveCount"])
    return t.answers


@scenario
def a_received_message_is_hidden_until_its_visibility_timeout(t: Target) -> list[dict]:
    url = t.create_queue()
    t.call("SendMessage", QueueUrl=url, MessageBody="hidden")
    t.call("ReceiveMessage", QueueUrl=url, VisibilityTimeout=30)
    t.call("ReceiveMessage", QueueUrl=url)
    return t.answers


@scenario
def receive_message_takes_up_to_max_number_of_messages(t: Target) -> list[dict]:
    url = t.create_queue()
    for n in range(5):
        t.call("SendMessage", QueueUrl=url, MessageBody=f"m{n}")
    t.call("ReceiveMessage", QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=30,
           WaitTimeSeconds=1)
    t.call("ReceiveMessage", QueueUrl=url, MaxNumberOfMessages=10)
    return t.answers


@scenario
def receive_message_with_out_of_range_arguments_is_invalid_parameter_value(t: Target) -> list[dict]:
    url = t.create_queue()
    t.call("ReceiveMessage", QueueUrl=url, MaxNumberOfMessages=11)
    t.call("ReceiveMessage", QueueUrl=url, MaxNumberOfMessages=0)
    t.call("ReceiveMessage", QueueUrl=url, WaitTimeSeconds=21)
    t.call("ReceiveMessage", QueueUrl=url, VisibilityTimeout=43201)
    return t.answers


@scenario
def send_message_with_a_delay_is_delayed(t: Target) -> list[dict]:
    url = t.create_queue()
    t.call("SendMessage", QueueUrl=url, MessageBody="later", DelaySeconds=60)
    t.call("ReceiveMessage", QueueUrl=url)
    t.call("GetQueueAttributes", QueueUrl=url,
           AttributeNames=["ApproximateNumberOfMessagesDelayed"])
    return t.answers


@scenario
def send_message_with_a_delay_out_of_range_is_invalid_parameter_value(t: Target) -> list[dict]:
    url = t.create_queue()
    t.call("SendMessage", QueueUrl=url, MessageBody="x", DelaySeconds=901)
    t.call("SendMessage", QueueUrl=url, MessageBody="x", DelaySeconds=-1)
    t.call("SendMessage", QueueUrl=url, MessageBody="x", DelaySeconds=900)
    return t.answers


@scenario
def send_message_at_the_queue_maximum_size_succeeds_and_one_byte_more_fails(
    t: Target,
) -> list[dict]:
    url = t.create_queue(MaximumMessageSize=1024)
    t.call("SendMessage", QueueUrl=url, MessageBody="x" * 1024)
    t.call("SendMessage", QueueUrl=url, MessageBody="x" * 1025)
    return t.answers


@scenario
def send_message_at_one_mebibyte_succeeds_and_one_byte_more_fails(t: Target) -> list[dict]:
    url = t.create_queue()
    t.call("SendMessage", QueueUrl=url, MessageBody="x" * 1_048_576)
    t.call("SendMessage", QueueUrl=url, MessageBody="x" * 1_048_577)
    return t.answers


@scenario
def message_attributes_count_towards_the_size_limit(t: Target) -> list[dict]:
    url = t.create_queue(MaximumMessageSize=1024)
    big = {"pad": {"DataType": "String", "StringValue": "y" * 100}}
    t.call("SendMessage", QueueUrl=url, MessageBody="x" * 1000, MessageAttributes=big)
    return t.answers


@scenario
def send_message_with_an_empty_body_is_missing_parameter(t: Target) -> list[dict]:
    url = t.create_queue()
    t.call("SendMessage", QueueUrl=url, MessageBody="")
    return t.answers


@scenario
def send_message_with_characters_outside_xml_is_invalid_message_contents(t: Target) -> list[dict]:
    url = t.create_queue()
    t.call("SendMessage", QueueUrl=url, MessageBody="bell \x07 here")
    t.call("SendMessage", QueueUrl=url, MessageBody="tab\tnewline\ncr\r ok")
    return t.answers


@scenario
def send_message_with_bad_attributes_is_rejected(t: Target) -> list[dict]:
    url = t.create_queue()
    empty = {"e": {"DataType": "String", "StringValue": ""}}
    untyped = {"u": {"StringValue": "v"}}
    bad_number = {"n": {"DataType": "Number", "StringValue": "forty-two"}}
    eleven = {f"a{n}": {"DataType": "String", "StringValue": "v"} for n in range(11)}
    reserved = {"AWS.thing": {"DataType": "String", "StringValue": "v"}}
    for attributes in (empty, untyped, bad_number, eleven, reserved):
        t.call("SendMessage", QueueUrl=url, MessageBody="x", MessageAttributes=attributes)
    return t.answers


@scenario
def purge_queue_removes_every_message(t: Target) -> list[dict]:
    url = t.create_queue()
    for n in range(3):
        t.call("SendMessage", QueueUrl=url, MessageBody=f"m{n}")
    t.call("PurgeQueue", QueueUrl=url)
    t.call("ReceiveMessage", QueueUrl=url)
    t.call("GetQueueAttributes", QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])
    return t.answers
