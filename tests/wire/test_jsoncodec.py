"""jsoncodec: orjson's speed, the standard library's answers."""

from __future__ import annotations

import json

import pytest

from hopper import jsoncodec

SAME_AS_JSON = [
    b'{"MaxNumberOfMessages": 123456789012345678901234567890}',  # beyond 64 bits: an int
    b'{"MaxNumberOfMessages": -9223372036854775809}',
    b'{"VisibilityTimeout": NaN}',
    b'{"VisibilityTimeout": Infinity}',
    b'{"MessageBody": "\\ud800"}',  # a lone surrogate escape
    b'{"MessageBody": "caf\\u00e9 \xe2\x82\xac"}',
    b'{"a": 1, "a": 2}',
    b'{"n": 1.5, "m": 10, "t": true, "z": null, "l": [1, "x"]}',
    b'{"Entries": [{"Id": "1", "DelaySeconds": 123456789012345678901234567890}]}',
    b'{"l": [[], {}, [{"x": [18446744073709551616]}]]}',
    b'[1, 2.5]',
    b'3.25',
    b'"text"',
]


@pytest.mark.parametrize("text", SAME_AS_JSON)
def test_loads_reads_what_json_reads(text: bytes) -> None:
    expected = json.loads(text)
    got = jsoncodec.loads(text)
    assert repr(got) == repr(expected)  # repr: NaN != NaN, and 1 != 1.0 in type
    assert repr(jsoncodec.loads(text.decode())) == repr(expected)


@pytest.mark.parametrize("text", [b"{", b'{"a": }', b"\xff\xfe", b'{"a": "b"} x'])
def test_loads_refuses_what_json_refuses(text: bytes) -> None:
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        jsoncodec.loads(text)


def test_loads_fails_as_json_fails_on_nesting_orjson_reads():
    # orjson reads 1,000 levels; json gives up near the interpreter's recursion limit.
    text = b'{"a":' + b"[" * 1000 + b"]" * 1000 + b"}"
    with pytest.raises(RecursionError):
        json.loads(text)
    with pytest.raises(RecursionError):
        jsoncodec.loads(text)


@pytest.mark.parametrize(
    "value",
    [
        {"Body": "caf\u00e9 \u20ac \U0001f600", "Count": 3, "Ok": True, "None": None},
        {"Big": 123456789012345678901234567890},
        {"Lone": "\ud800"},
        [1.5, -0.25, "x"],
    ],
)
def test_dumps_writes_what_json_reads_back_the_same(value: object) -> None:
    assert json.loads(jsoncodec.dumps(value)) == value


def test_dumps_is_compact_and_uses_default_for_other_types() -> None:
    def encode(thing: object) -> str:
        assert isinstance(thing, bytes)
        return thing.hex()

    assert jsoncodec.dumps({"a": [1, 2], "b": b"\x01"}, default=encode) == b'{"a":[1,2],"b":"01"}'
    with pytest.raises(TypeError):
        jsoncodec.dumps({"b": b"\x01"})
