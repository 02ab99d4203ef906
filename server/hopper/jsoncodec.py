"""JSON on the hot paths: answers of the JSON protocol and the jsonb of message rows,
through orjson. Writing a receive of ten messages takes orjson 2 us where the standard
library takes 39 us, and reading a row's attributes 0.1 us against 2.7 us. (Request
bodies are read by the standard library: there orjson saves 2 us of 7, and reads
integers beyond 64 bits as floats, which a client's number must not become.)

Where orjson reads or writes differently, the standard library does it, so that the
result does not depend on which one ran: orjson reads integers beyond 64 bits as
floats (text with a run of 19 digits goes to `json`), refuses NaN, Infinity and lone
surrogate escapes that `json` accepts (text orjson refuses is read again by `json`,
whose error stands), and cannot write lone surrogates or integers beyond 64 bits.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import orjson

_LONG_NUMBER = re.compile(r"\d{19}")
_LONG_NUMBER_BYTES = re.compile(rb"\d{19}")


def loads(data: bytes | str) -> Any:
    """As `json.loads`. Raises ValueError for text that is not JSON."""
    pattern = _LONG_NUMBER_BYTES if isinstance(data, bytes) else _LONG_NUMBER
    if pattern.search(data) is None:  # type: ignore[arg-type]
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
    return json.loads(data)


def dumps(value: Any, default: Callable[[Any], Any] | None = None) -> bytes:
    """Compact UTF-8 JSON of `value`; `default` as in `json.dumps`."""
    try:
        return orjson.dumps(value, default=default)
    except TypeError:
        return json.dumps(value, default=default, separators=(",", ":")).encode()
