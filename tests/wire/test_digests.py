"""The MD5 digests are byte-exact with AWS: published vectors, and moto's implementation."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from moto.sqs.models import Message as MotoMessage

from hopper.core.model import MessageAttribute
from hopper.wire.digests import md5_of_attributes, md5_of_body, md5_of_system_attributes


def string(value: str, data_type: str = "String") -> MessageAttribute:
    return MessageAttribute(data_type=data_type, string_value=value)


def binary(value: bytes, data_type: str = "Binary") -> MessageAttribute:
    return MessageAttribute(data_type=data_type, binary_value=value)


# --- the body ------------------------------------------------------------------------


def test_body_digest_of_the_aws_documentation_example():
    # SendMessage's example response in the SQS API reference.
    assert md5_of_body("This is a test message") == "fafb00f5732ab283681e124bf8747ed1"


def test_body_digest_of_rfc_1321_vectors():
    assert md5_of_body("") == "d41d8cd98f00b204e9800998ecf8427e"
    assert md5_of_body("abc") == "900150983cd24fb0d6963f7d28e17f72"


def test_body_digest_hashes_the_utf8_bytes():
    # MD5 of b"\xc3\xa9" (é in UTF-8); the Latin-1 byte 0xe9 would give 3406877694....
    assert md5_of_body("é") == "66ddcd97cfdeabb2f6fb8a999b4bc76f"


# --- user attributes: published vectors ----------------------------------------------


def test_attribute_digest_of_the_npm_readme_vector():
    # npm aws-md5-of-message-attributes, README.
    attributes = {"attribName1": string("attribValue 1")}
    assert md5_of_attributes(attributes) == "19e27d4e946b072f3f58da80d94fd778"


def test_attribute_digest_of_one_string_attribute():
    # The "Example Store" vectors follow the SQS developer guide's example attributes.
    attributes = {"SellerName": string("Example Store")}
    assert md5_of_attributes(attributes) == "cd28f3b68aeee4b2eac9c66f2f694b58"


def test_attribute_digest_of_several_string_attributes():
    attributes = {
        "City": string("Any City"),
        "PostalCode": string("99065"),
        "Region": string("WA"),
        "SellerName": string("Example Store"),
    }
    assert md5_of_attributes(attributes) == "66d793da93becb551e41562575418975"


def test_attribute_digest_of_strings_and_a_number():
    attributes = {
        "City": string("Any City"),
        "PostalCode": string("99065"),
        "PricePerGallon": string("1.99", "Number"),
        "Region": string("WA"),
        "SellerName": string("Example Store"),
    }
    assert md5_of_attributes(attributes) == "10809b55e3d9b22c17220b7dbaf283ef"


def test_attribute_digest_sorts_names_whatever_the_insertion_order():
    # The Amazon SDK sample vector (as recorded in YDB's SQS tests), given out of order.
    attributes = {
        "test_attribute_name_2": string("test_attribute_value_2"),
        "test_attribute_name_1": string("test_attribute_value_1"),
    }
    assert md5_of_attributes(attributes) == "d53f3b558fe951154770f25cb63dbba9"


def test_attribute_digest_of_a_binary_attribute_hashes_the_raw_bytes():
    attributes = {"test_attribute_name": binary(b"test_attribute_value")}
    assert md5_of_attributes(attributes) == "23f6bd27ea87aab7dfeadcc9aebee495"


def test_attribute_digest_of_a_number_and_a_string_as_the_go_sdk_types_give_them():
    # wcharczuk/sqslite, computed over aws-sdk-go-v2 MessageAttributeValue.
    attributes = {"ordinal": string("1", "Number"), "category": string("test")}
    assert md5_of_attributes(attributes) == "d21ae90c49061e927f57df5f5d72be1f"


def test_attribute_digest_includes_the_custom_type_suffix():
    plain = {"price": string("1.5", "Number")}
    custom = {"price": string("1.5", "Number.float")}
    assert md5_of_attributes(plain) != md5_of_attributes(custom)


def test_attribute_digest_distinguishes_binary_from_string_transport():
    assert md5_of_attributes({"a": string("xyz")}) != md5_of_attributes({"a": binary(b"xyz")})


def test_no_attributes_have_no_digest():
    # AWS omits MD5OfMessageAttributes then; the MD5 of nothing would fail SDK checks.
    assert md5_of_attributes({}) is None


# --- system attributes ---------------------------------------------------------------


def test_system_digest_is_the_attribute_digest_of_the_trace_header():
    header = "Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1"
    expected = md5_of_attributes({"AWSTraceHeader": string(header)})
    assert md5_of_system_attributes(header) == expected
    assert md5_of_system_attributes(header) == moto_digest({"AWSTraceHeader": string(header)})


def test_no_trace_header_has_no_system_digest():
    assert md5_of_system_attributes(None) is None


# --- agreement with moto over random attributes --------------------------------------


def moto_digest(attributes: dict[str, MessageAttribute]) -> str:
    message = MotoMessage("id", "body")
    # moto refuses names outside [A-Za-z0-9_.-] before hashing; the digest itself is
    # defined over any UTF-8 name, and that is what this comparison is about. (moto's
    # model metaclass forbids subclassing outside moto, so the check is shadowed.)
    message.validate_attribute_name = lambda name: None  # type: ignore[method-assign]
    message.message_attributes = {
        name: moto_shape(attribute) for name, attribute in attributes.items()
    }
    return message.attribute_md5


def moto_shape(attribute: MessageAttribute) -> dict[str, object]:
    if attribute.binary_value is not None:
        return {"DataType": attribute.data_type, "BinaryValue": attribute.binary_value}
    return {"DataType": attribute.data_type, "StringValue": attribute.string_value}


# AWS rejects empty values, and moto skips the transport byte for them: keep them out.
suffixes = st.one_of(st.just(""), st.text(min_size=1, max_size=20).map(lambda s: "." + s))
names = st.one_of(
    st.from_regex(r"[A-Za-z0-9_.\-]{1,40}", fullmatch=True),
    st.text(min_size=1, max_size=40),  # non-ASCII names and anything else UTF-8 allows
)
string_attributes = st.builds(
    string,
    st.text(min_size=1, max_size=200),
    st.tuples(st.sampled_from(["String", "Number"]), suffixes).map("".join),
)
binary_attributes = st.builds(
    binary, st.binary(min_size=1, max_size=200), suffixes.map(lambda s: "Binary" + s)
)
attribute_maps = st.dictionaries(
    names, st.one_of(string_attributes, binary_attributes), min_size=1, max_size=10
)


@given(attribute_maps)
def test_attribute_digest_agrees_with_moto(attributes):
    assert md5_of_attributes(attributes) == moto_digest(attributes)


@given(st.text(max_size=500))
def test_body_digest_agrees_with_moto(body):
    assert md5_of_body(body) == MotoMessage("id", body).body_md5
