"""What a statement quotes is read once: the word checks skip only what the fact check requires (R-V-2, R-V-4)."""

from __future__ import annotations

import unicodedata

import pytest

from diagnosis_server.text.quotes import MAX_QUOTE, quoted_texts, unquoted


@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        ('logs "no space left on device"', ["no space left on device"]),
        ("logs 'disk full' and `ENOSPC`", ["disk full", "ENOSPC"]),
        ("logs \u201cno space\u201d", ["no space"]),
        ("the client's pods' requests", []),  # apostrophes
        ("５０２'roll it back'", []),  # a fullwidth digit is a digit beside the mark
        ("\u0455v\u0441'roll it back'", []),  # Cyrillic letters too
        ("'roll it back'５", []),
        ("'x'", []),  # one character is no quote
    ],
)
def test_a_single_quote_beside_a_letter_or_digit_of_any_script_is_no_quote(text: str, quoted: list[str]) -> None:
    assert quoted_texts(text) == quoted


def test_a_text_reads_the_same_quotes_before_and_after_compatibility_folding() -> None:
    for text in ("５０２'roll it back'", "'roll it back'５０２", "𝟓𝟎𝟐'roll it back'", "ｓｖｃ 'disk full'"):
        assert len(quoted_texts(text)) == len(quoted_texts(unicodedata.normalize("NFKC", text)))


def test_a_long_quote_is_still_one_and_one_past_the_bound_is_none() -> None:
    inner = "roll back the payments release now " * 20
    assert quoted_texts(f'"{inner}"') == [inner]
    assert unquoted(f'a "{inner}" b') == "a   b"
    assert quoted_texts('"' + "x" * (MAX_QUOTE + 1) + '"') == []
