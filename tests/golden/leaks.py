"""The adversarial suite's own leak search: one normalization, written independently of the product's.

A marker of unverified material "survives" in a text when, after the same normalization of both:

1. Unicode NFKC (fullwidth letters, ligatures, mathematical alphanumerics, no-break spaces);
2. removal of invisible characters: every format character (general category Cf: zero-width space
   U+200B, joiners U+200C/U+200D, word joiner U+2060, BOM U+FEFF, soft hyphen U+00AD, bidi controls
   U+202A..U+202E and U+2066..U+2069, tag characters), variation selectors, the combining grapheme
   joiner and the Hangul fillers;
3. case folding;
4. a confusable skeleton in the spirit of Unicode TR39: each non-ASCII character that
   ``confusable-homoglyphs`` (the Unicode confusables data) lists as confusable with one ASCII
   character becomes that character (Cyrillic "о" -> "o", Greek "Ο" -> "o", "‐" -> "-"), then the ASCII
   confusables 0/o, 1/l/i/| and rn/m are folded together;
5. markdown emphasis removed (``*``, ``_``, backticks, ``~``);
6. whitespace collapsed,

the marker occurs in the text (``collapsed``), or occurs once all whitespace is removed (``joined``:
a marker broken by a newline or split over two lines), or, for markers of at least seven letters and
digits, occurs among the text's letters and digits alone once bracketed claim-id lists are dropped
(``alnum``: a marker split across two answer items, or broken by punctuation).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from confusable_homoglyphs import confusables

_EXTRA_INVISIBLE = frozenset(
    [
        *(0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180E, 0x3164, 0xFFA0),
        *range(0x180B, 0x1810),  # Mongolian variation selectors
        *range(0xFE00, 0xFE10),  # variation selectors
        *range(0xE0100, 0xE01F0),  # variation selectors supplement
    ]
)
BIDI_CONTROLS = frozenset([0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)])
_EMPHASIS = str.maketrans("", "", "*_`~")
_ASCII_FOLD = str.maketrans({"0": "o", "1": "l", "i": "l", "|": "l"})
_BRACKETS = re.compile(r"\[[^\[\]\n]{0,120}\]")
ALNUM_MIN = 7


@lru_cache(maxsize=1)
def _skeleton_table() -> dict[int, str]:
    """Non-ASCII character -> the ASCII character it is confusable with (letters preferred to digits)."""
    table: dict[int, str] = {}
    for char, glyphs in confusables.confusables_data.items():
        if len(char) != 1 or ord(char) < 0x80:
            continue
        ascii_ = [g["c"] for g in glyphs if len(g["c"]) == 1 and ord(g["c"]) < 0x80 and g["c"].isprintable()]
        if not ascii_:
            continue
        ascii_.sort(key=lambda c: (not c.isalpha(), not c.isalnum(), c))
        table[ord(char)] = ascii_[0]
    return table


def _visible(char: str) -> bool:
    code = ord(char)
    return unicodedata.category(char) != "Cf" and code not in _EXTRA_INVISIBLE and code not in BIDI_CONTROLS


def normalize(text: str) -> str:
    """The normalized form of ``text`` (see the module docstring), whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(ch for ch in text if _visible(ch))
    text = text.casefold()
    text = text.translate(_skeleton_table())
    text = unicodedata.normalize("NFKC", text).casefold()
    text = "".join(ch for ch in text if _visible(ch))
    text = text.translate(_ASCII_FOLD).replace("rn", "m")
    text = text.translate(_EMPHASIS)
    return " ".join(text.split())


def joined(text: str) -> str:
    return "".join(normalize(text).split())


def alnum(text: str) -> str:
    return "".join(ch for ch in _BRACKETS.sub("", normalize(text)) if ch.isalnum())


@lru_cache(maxsize=4096)
def _forms(marker: str) -> tuple[str, str, str]:
    """A marker's normalized forms: collapsed, without whitespace, letters and digits alone."""
    collapsed = normalize(marker)
    return collapsed, "".join(collapsed.split()), "".join(ch for ch in collapsed if ch.isalnum())


@dataclass(frozen=True, slots=True)
class Hit:
    marker: str
    how: str  # collapsed, joined or alnum

    def __str__(self) -> str:
        return f"{self.marker!r} ({self.how})"


class Haystack:
    """A text normalized once, searched for many markers."""

    def __init__(self, text: str) -> None:
        self.raw = text
        self.collapsed = normalize(text)
        self.joined = "".join(self.collapsed.split())
        self.alnum = "".join(ch for ch in _BRACKETS.sub("", self.collapsed) if ch.isalnum())

    def find(self, marker: str) -> Hit | None:
        collapsed, joined_, letters = _forms(marker)
        if not collapsed:
            return None
        if collapsed in self.collapsed:
            return Hit(marker, "collapsed")
        if joined_ in self.joined:
            return Hit(marker, "joined")
        if len(letters) >= ALNUM_MIN and letters in self.alnum:
            return Hit(marker, "alnum")
        return None

    def hits(self, markers: Iterable[str]) -> list[Hit]:
        return [hit for hit in (self.find(m) for m in markers) if hit is not None]

    def __contains__(self, marker: str) -> bool:
        return self.find(marker) is not None


def contains(text: str, marker: str) -> bool:
    return marker in Haystack(text)


def bidi_controls(text: str) -> list[str]:
    """The bidi control characters in ``text``, as U+XXXX."""
    return sorted({f"U+{ord(ch):04X}" for ch in text if ord(ch) in BIDI_CONTROLS})


def strings(value: object, *, keys: bool = True) -> Iterable[str]:
    """Every string in a JSON-like value, in document order (object keys too, unless ``keys`` is false)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            if keys:
                yield str(key)
            yield from strings(item, keys=keys)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings(item, keys=keys)
