"""core/characters: SQS's character set, whichever test decides."""

from __future__ import annotations

from hopper.core import characters


def _in_xml_set(code: int) -> bool:
    return (
        code in (0x9, 0xA, 0xD)
        or 0x20 <= code <= 0xD7FF
        or 0xE000 <= code <= 0xFFFD
        or 0x10000 <= code <= 0x10FFFF
    )


def test_allowed_is_xml_character_set_for_every_code_point_beside_ascii_text():
    # Beside printable ASCII, alone and at either end: the quick test for printable
    # ASCII must hand every other text to the full rule.
    wrong = [
        code
        for code in range(0x110000)
        if characters.allowed(f"ab{chr(code)}") != _in_xml_set(code)
        or characters.allowed(chr(code)) != _in_xml_set(code)
    ]
    assert wrong == []
    assert characters.allowed("QueueUrl ~!")
    assert characters.allowed("")
