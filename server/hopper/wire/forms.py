"""`application/x-www-form-urlencoded` fields (a query string or a POST body), decoded
in time linear in their size and at C speed.

`urllib.parse.parse_qsl` decodes percent escapes in a Python loop, one iteration per
`%`: an 8 MiB body of `%41%41...` held the event loop for seconds. Here each field is
split with `bytes.split` and percent-decoded by `binascii.a2b_qp`, whose `=XX` escapes
are percent escapes under another sign; the few ways QP and forms differ are mapped
away first (see `unquote_plus`). A request also carries at most `MAX_FIELDS` fields,
counted before anything is decoded.
"""

from __future__ import annotations

import binascii

from hopper.wire.errors import SqsError

# The largest real query request, a SendMessageBatch of 10 entries with 10 attributes
# each and a trace header, has about 400 fields; the signature adds a handful.
MAX_FIELDS = 1_000



def form_fields(data: bytes) -> dict[str, str]:
    """The fields of `data`, name -> value (a later repeat of a name wins, a name
    without `=` has the value ""). Raises SqsError on more than MAX_FIELDS fields or
    on text that is not UTF-8 once decoded."""
    if not data:
        return {}
    if data.count(b"&") >= MAX_FIELDS:
        raise too_many_fields()
    _text(data)  # as a form, the bytes themselves must be UTF-8 (escapes aside)
    fields: dict[str, str] = {}
    for pair in data.split(b"&"):
        if not pair:
            continue
        name, _, value = pair.partition(b"=")
        fields[unquote_plus(name)] = unquote_plus(value)
    return fields


def too_many_fields() -> SqsError:
    return SqsError(
        "InvalidParameterValue", f"A request can have at most {MAX_FIELDS} parameters."
    )


def unquote_plus(raw: bytes) -> str:
    """`raw` with `+` as a space and `%XX` as the byte XX, as UTF-8 text; a `%` that
    starts no escape stays itself (as `urllib.parse.unquote_plus` keeps it)."""
    if b"%" not in raw and b"+" not in raw:
        return _text(raw)
    lowered = raw.lower()
    if b"\xfe" in raw or b"\xff" in raw or b"%fe" in lowered or b"%ff" in lowered:
        raise _not_utf8()  # (never UTF-8, and the markers below)
    # For a2b_qp, `=` followed by two hex digits is that byte and any other `=` is kept
    # as it is, except `==` (one `=` out for two in), `=` before a line break and a
    # final `=` (dropped). So a literal or escaped `=` becomes the marker 0xFF, a `%`
    # that would land in one of those three places the marker 0xFE, and every other `%`
    # a `=`. In the output a `=` is then a `%` that started no escape, as is 0xFE, and
    # 0xFF is a `=`. Every step keeps the length: nothing here grows with the input.
    text = raw.translate(_PLUS_AND_EQUALS).replace(b"%3D", b"\xff").replace(b"%3d", b"\xff")
    while b"%%" in text:  # at most twice: each pass marks every other `%` of a run
        text = text.replace(b"%%", b"\xfe%")
    if b"\r" in text or b"\n" in text:
        text = text.replace(b"%\r", b"\xfe\r").replace(b"%\n", b"\xfe\n")
    if text.endswith(b"%"):
        text = text[:-1] + b"\xfe"
    decoded = binascii.a2b_qp(text.translate(_PERCENT_AS_EQUALS))
    return _text(decoded.translate(_MARKERS_BACK))


# bytes.translate maps byte to byte in one C pass, whatever the input holds.
_PLUS_AND_EQUALS = bytes.maketrans(b"+=", b" \xff")
_PERCENT_AS_EQUALS = bytes.maketrans(b"%", b"=")
_MARKERS_BACK = bytes.maketrans(b"=\xfe\xff", b"%%=")


def _text(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise _not_utf8() from None


def _not_utf8() -> SqsError:
    return SqsError("SerializationException", "The request is not a valid UTF-8 form encoding.")
