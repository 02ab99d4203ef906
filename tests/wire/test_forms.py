"""Form fields decoded as `urllib.parse` decodes them, in linear time, and bounded."""

from __future__ import annotations

from urllib.parse import parse_qsl
from urllib.parse import unquote_plus as reference_unquote_plus

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hopper.wire.errors import SqsError
from hopper.wire.forms import MAX_FIELDS, form_fields, unquote_plus

# Pieces that meet every case the decoder maps: escapes (valid, broken, of `=`, of
# bytes that are not UTF-8), runs of `%`, `+`, `=`, line breaks and multi-byte text.
PIECES = [
    b"%", b"%%", b"%41", b"%4", b"%zz", b"%3D", b"%3d", b"%25", b"%20", b"%0A", b"%0D",
    b"%C3", b"%A9", b"%c3%a9", b"%FF", b"%fe", b"+", b"=", b"==", b"=3D", b"=41", b"\r",
    b"\n", b"a", b"Z", b"_", b" ", b"\xc3\xa9", b"\x00",
]
encodings = st.lists(st.sampled_from(PIECES), max_size=12).map(b"".join)


def reference(raw: bytes) -> str | None:
    try:
        return reference_unquote_plus(raw.decode("utf-8"), errors="strict")
    except UnicodeDecodeError:
        return None


def decoded(raw: bytes) -> str | None:
    try:
        return unquote_plus(raw)
    except SqsError as error:
        assert error.name == "SerializationException"
        return None


@settings(max_examples=1_000, deadline=None)
@given(encodings)
def test_a_field_decodes_exactly_as_urllib_decodes_it(raw):
    assert decoded(raw) == reference(raw)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(encodings, encodings), max_size=5))
def test_a_form_decodes_to_the_fields_parse_qsl_finds(pairs):
    data = b"&".join(name + b"=" + value for name, value in pairs)
    try:
        expected = dict(parse_qsl(data.decode("utf-8"), keep_blank_values=True, errors="strict"))
    except UnicodeDecodeError:
        expected = None
    try:
        assert form_fields(data) == expected
    except SqsError:
        assert expected is None


def test_a_field_without_an_equals_sign_has_an_empty_value():
    assert form_fields(b"Action=ListQueues&flag&&") == {"Action": "ListQueues", "flag": ""}


def test_more_fields_than_a_request_can_have_are_refused_before_decoding():
    with pytest.raises(SqsError) as raised:
        form_fields(b"&".join([b"a=%ZZ"] * (MAX_FIELDS + 1)))
    assert raised.value.name == "InvalidParameterValue"
    assert len(form_fields(b"&".join([b"a=1"] * MAX_FIELDS))) == 1
