"""The characters SQS lets a client store, in one place.

SQS accepts text only from XML 1.0's character set: #x9 #xA #xD #x20-#xD7FF
#xE000-#xFFFD #x10000-#x10FFFF. Everything else (NUL and the other control characters,
lone surrogates, U+FFFE/U+FFFF) is refused on the way in: stored, it would make every
later XML answer that returns it invalid, and PostgreSQL refuses NUL in text outright.
"""

from __future__ import annotations

import re

FORBIDDEN = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
ALLOWED_SET = "#x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF"


def allowed(text: str) -> bool:
    """Whether every character of `text` is one SQS accepts."""
    # Printable ASCII (#x20 to #x7E) is all allowed, and str's own tests of it run
    # faster than the pattern: 0.05 against 0.16 us for a parameter name.
    return (text.isascii() and text.isprintable()) or FORBIDDEN.search(text) is None
