"""A question of characters that show nothing is no question (issue 33 item 6): every code point Unicode marks
Default_Ignorable_Code_Point or White_Space (the ``regex`` package's tables, not a hand list), the separators and
other characters, and the Braille blank; anything visible, in any script, is a question."""

from __future__ import annotations

import grpc
import pytest
import regex

from diagnosis_server.api.errors import ApiError
from diagnosis_server.api.validation import check_question, only_invisible

INVISIBLE = [
    "\u3164\u3164\u3164",  # Hangul filler
    "\uffa0\uffa0",  # halfwidth Hangul filler
    "\u115f\u1160",  # Hangul choseong and jungseong fillers
    "\u2800\u2800\u2800",  # Braille pattern blank
    "\u034f\ufe0f\u034f\ufe0e",  # combining grapheme joiner and variation selectors
    "\U000e0100\U000e01ef",  # variation selectors supplement
    "\U000e0001\U000e0072\U000e006f\U000e007f",  # tag characters
    "\u200b\u200c\u200d\u2060",  # zero-width space, non-joiner, joiner, word joiner
    "\u180e\u180b",  # Mongolian vowel separator and free variation selector
    "\u17b4\u17b5",  # Khmer inherent vowels
    "\u00ad\u061c\ufeff",  # soft hyphen, Arabic letter mark, byte order mark
    "\u3000\u2003\u00a0",  # ideographic, em and no-break spaces
    "\U0001d173\U0001d17a",  # musical symbol format characters
    " \u3164 \u2800 \u034f ",
]
VISIBLE = ["why 502?", "為什麼", "почему", "لماذا", "למה", "なぜ", "왜", "क्यों", "🔥", "e\u0301", "\u2800x", "1"]


def _refused(question: str) -> ApiError:
    with pytest.raises(ApiError) as raised:
        check_question(question, max_chars=2000)
    return raised.value


@pytest.mark.parametrize("question", INVISIBLE)
def test_a_question_of_invisible_characters_is_invalid(question: str) -> None:
    error = _refused(question)
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT


@pytest.mark.parametrize("question", VISIBLE)
def test_a_visible_question_in_any_script_is_accepted(question: str) -> None:
    assert check_question(question, max_chars=2000) == question


def test_every_default_ignorable_and_white_space_code_point_alone_is_no_question() -> None:
    """Derived from Unicode's own property tables: each such code point, alone, shows nothing."""
    everything = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    ignorable = regex.findall(r"[\p{Default_Ignorable_Code_Point}\p{White_Space}]", everything)
    assert len(ignorable) > 4000  # the tables as Unicode publishes them (tags, variation selectors, fillers, ...)
    assert all(only_invisible(char) for char in ignorable)
    assert not only_invisible("a") and not only_invisible("\u0301a")


def test_marks_without_a_base_and_named_fillers_are_no_question() -> None:
    assert only_invisible("\u0301\u0308\u20dd")  # combining marks with nothing to sit on
    assert only_invisible("\U00016fe4\u2d7f")  # Khitan filler, Tifinagh joiner
    assert only_invisible("\U0001d159")  # musical null notehead
    # A gap filler is punctuation that draws a line; a symbol for null or blank is a visible picture.
    assert not only_invisible("\ua8f9") and not only_invisible("\u2400") and not only_invisible("\u2422")
