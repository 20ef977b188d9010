"""The one normalization's tables, pinned: which characters are invisible and which homoglyphs fold to ASCII.

Every comparison that decides what a user may read goes through these tables (issue 11), so a change to how
they are built must show. The skeleton table derives from the ``confusable-homoglyphs`` data: its digest is
pinned for the version it was computed with (a new version of the data is checked by the mappings below).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json

import pytest

from diagnosis_server.text.normalize import (
    _invisible_table,
    _skeleton_table,
    compact,
    display_text,
    has_bidi_control,
    normalize,
    skeleton,
    strip_invisible,
    words,
)

# Capitals fold as their small letters do (one folding for facts and matching).
SKELETON_DIGEST = {"3.3.1": (1278, "f8b9d3a83aef5b8378fba9890755ebda5de8519e8c637c6364d9209cb771ba4f")}
INVISIBLE_DIGEST = (245, "8a215f8126ab12d8cff1ec663f971e0f10febbf2cf32fab239ace51c68c3ad28")


def _digest(table: dict[int, str | None] | dict[int, str]) -> tuple[int, str]:
    return len(table), hashlib.sha256(json.dumps(sorted(table.items())).encode()).hexdigest()


def test_the_invisible_table_is_pinned() -> None:
    assert _digest(_invisible_table.__wrapped__()) == INVISIBLE_DIGEST  # built afresh, not the cached table


def test_the_skeleton_table_is_pinned_for_its_data_version() -> None:
    version = importlib.metadata.version("confusable-homoglyphs")
    if version not in SKELETON_DIGEST:
        pytest.skip(f"no digest pinned for confusable-homoglyphs {version}")
    assert _digest(_skeleton_table.__wrapped__()) == SKELETON_DIGEST[version]


@pytest.mark.parametrize(
    ("char", "ascii"),
    [
        ("а", "a"),
        ("е", "e"),
        ("о", "o"),
        ("р", "p"),
        ("с", "c"),
        ("х", "x"),
        ("к", "k"),
        ("К", "k"),
        ("Ο", "o"),
        ("ο", "o"),
        ("𝐚", "a"),
        ("і", "i"),
        ("ѕ", "s"),
        ("ј", "j"),
    ],
)
def test_known_homoglyphs_fold_to_their_ascii_letter(char: str, ascii: str) -> None:
    assert _skeleton_table()[ord(char)] == ascii
    assert skeleton(f"x{char}y") == f"x{ascii}y"


def test_ascii_is_never_remapped_and_digits_stay_digits() -> None:
    table = _skeleton_table()
    assert not any(code < 128 for code in table)
    assert all(v.isascii() and v.isalnum() and len(v) == 1 and v == v.lower() for v in table.values())
    assert skeleton("l1O0 checkout-api") == "l1O0 checkout-api"


def test_invisible_and_control_characters() -> None:
    assert strip_invisible("a\u200bb\u00adc\u202ed\u2066e\ufe0ff\u034fg") == "abcdefg"
    assert strip_invisible("a\nb\tc\x00d") == "a b c d"
    assert display_text("x\u202ey  z") == "xy  z"
    assert has_bidi_control("a\u202eb") and has_bidi_control("\u2067") and not has_bidi_control("a\u200bb")


def test_normalize_compact_and_words() -> None:
    assert normalize("  Ｃｈｅｃｋ\u00a0*out*  _API_\n ") == "check out api"
    assert compact("Check\nOut  API") == "checkoutapi"
    assert words("Pod-7 **OOMKilled**, 512Mi!") == ["pod", "7", "oomkilled", "512mi"]
    assert normalize("ﬁle ℌ") == "file h"


# Over the 512 characters that normalize and compact remember: a long text takes the uncached path.
_LONG = "The **orders-db** disk\u00a0is _full_,\n" * 20


def test_a_long_text_is_normalized_as_a_short_one_is() -> None:
    assert len(_LONG) > 512
    assert normalize(_LONG) == " ".join(["the orders-db disk is full,"] * 20)
    assert compact(_LONG) == "theorders-dbdiskisfull," * 20
