"""Numbers as people write them, rewritten as the plain forms a claim's facts are read in (R-V-2): each rule fails
closed, since the plain number is then compared with the evidence like any other."""

from __future__ import annotations

import re
import unicodedata

# Digits grouped by an apostrophe (Swiss), a thin, narrow no-break or no-break space (SI): "1'234.5", "1 000".
_GROUPED = re.compile(r"(?<![\w.,'])(\d{1,3})((?:['’\u2009\u202f\u00a0]\d{3})+)(?:([.,])(\d+))?(?![\w'’])")
# French grouping with an ordinary space and a decimal comma: "1 234,5" (a space alone is too often two numbers).
_FRENCH = re.compile(r"(?<![\w.,])(\d{1,3})((?: \d{3})+),(\d+)(?![\w.,])")
# Percent in words: "25 percent", "25 per cent", "25 pct".
_PERCENT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*(?:percent|per cent|pct)\b", re.IGNORECASE)
# Scientific and power-of-ten forms: "1e3", "1.0E+4", "10^3", "1 × 10^4", "2.5x10^3".
_TIMES_POWER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*[×xX*]\s*10\^([+-]?\d{1,2})(?![\w.])")
_POWER = re.compile(r"(?<![\w.^])10\^([+-]?\d{1,2})(?![\w.])")
_EXPONENT = re.compile(r"(?<![\w.-])(\d+(?:\.\d+)?)[eE]([+-]?\d{1,2})(?![\w.-])")
# A share written as a fraction before "of" ("1/4 of", "¼ of" as NFKC writes it: "1⁄4 of"), or "one in four".
_SHARE = re.compile(r"(?<![\w./])(\d{1,3})\s*[/⁄]\s*(\d{1,3})(?=\s+of\b)")
_SMALL = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17,
    "eighteen": 18, "nineteen": 19,
}  # fmt: skip
_TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90
}  # fmt: skip
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
_WORD = "|".join([*_SMALL, *_TENS, *_SCALES])
_IN = re.compile(
    rf"\b(\d{{1,3}}|{'|'.join(_SMALL)})\s+in\s+(\d{{1,3}}|{'|'.join(_SMALL)})\b"
    r"(?!\s*(?:ms|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|days?|weeks?)\b)",  # (3 in 10 minutes: a rate)
    re.IGNORECASE,
)
# Two or more number words in a row ("two hundred fifty", "twenty-five", "one thousand and twenty").
_WORDS = re.compile(rf"\b(?:{_WORD})(?:(?:\s+and\s+|\s+|-)(?:{_WORD}))+\b", re.IGNORECASE)


# The vulgar fractions ("¼", "⅓"), which NFKC writes with a fraction slash ("1⁄4").
_VULGAR = frozenset(chr(c) for c in range(0xA0, 0x2190) if unicodedata.name(chr(c), "").startswith("VULGAR FRACTION"))


def _vulgar(ch: str) -> str:
    return unicodedata.normalize("NFKC", ch) if ch in _VULGAR else ch


def _plain(value: float) -> str:
    return str(int(value)) if value.is_integer() else f"{value:.6g}"


def _worded(words: str) -> str:
    """A run of number words as its number, or the words unchanged when they do not make one number."""
    total, current = 0, 0
    for word in re.split(r"\s+and\s+|\s+|-", words.lower()):
        if word in _SMALL:
            if current % 10 or 0 < current % 100 < 20:
                return words  # "one two": two numbers, not one
            current += _SMALL[word]
        elif word in _TENS:
            if current % 100:
                return words
            current += _TENS[word]
        elif word == "hundred":
            if not current or current >= 100:
                return words
            current *= 100
        else:
            if not current:
                return words
            total += current * _SCALES[word]
            current = 0
    return str(total + current)


def _share(count: int, whole: int) -> str:
    return f"~{100 * count / whole:.3g}%" if whole and count <= whole else f"{count}/{whole}"


def _number(word: str) -> int:
    return int(word) if word.isdigit() else _SMALL[word.lower()]


def grouped(text: str) -> str:
    """Digits grouped by an apostrophe or a thin or no-break space as one number (before NFKC, which makes those
    spaces ordinary ones)."""
    return _GROUPED.sub(
        lambda m: m.group(1) + re.sub(r"\D", "", m.group(2)) + (f".{m.group(4)}" if m.group(3) else ""), text
    )


def plain_numbers(text: str) -> str:
    """``text`` with its numbers in plain forms: grouped digits joined, percent in words as "%", scientific and
    power-of-ten forms as their value, shares ("1/4 of", "one in four") as percentages as rounded as a fraction is,
    runs of number words as their number."""
    text = "".join(_vulgar(ch) for ch in text) if any(ch in _VULGAR for ch in text) else text
    text = _FRENCH.sub(lambda m: m.group(1) + m.group(2).replace(" ", "") + "." + m.group(3), text)
    text = _PERCENT.sub(lambda m: f"{m.group(1)}%", text)
    text = _TIMES_POWER.sub(lambda m: _plain(float(m.group(1)) * 10 ** int(m.group(2))), text)
    text = _POWER.sub(lambda m: _plain(10.0 ** int(m.group(1))), text)
    text = _EXPONENT.sub(lambda m: _plain(float(m.group(1)) * 10 ** int(m.group(2))), text)
    text = _SHARE.sub(lambda m: _share(int(m.group(1)), int(m.group(2))), text)
    text = _IN.sub(lambda m: _share(_number(m.group(1)), _number(m.group(2))) + " of", text)
    return _WORDS.sub(lambda m: _worded(m.group(0)), text)
