"""One normalization for every text comparison, and the sanitizing of every text that is shown.

Every comparison of texts that decides what a user may read (the Composer guard, the exclusion of
statements that are not allowed, the derivability of a claim from its evidence, the redaction of gap
descriptions) goes through ``normalize``, so that a statement cannot slip past one of them by being
spelled differently:

1. Unicode NFKC (fullwidth letters, ligatures, non-breaking spaces become their plain forms);
2. invisible characters removed: zero-width characters, the soft hyphen, bidi controls and every other
   format character (category Cf), and control characters (a newline or tab becomes a space);
3. confusable skeletons (in the spirit of Unicode TR39): a non-ASCII letter or digit that is a known
   homoglyph of an ASCII one (Cyrillic ``а``, Greek ``ο``, mathematical ``𝐚``) becomes that ASCII one,
   from the confusables table of the ``confusable-homoglyphs`` package; ASCII itself is never remapped,
   so ``l`` and ``1`` stay apart and numbers stay numbers;
4. case-folding;
5. markdown emphasis removed (``*``, ``_``, backticks, ``~``);
6. whitespace collapsed to single spaces, none at the ends.

``display_text`` is the one display check every shown text goes through, whatever its field (statements,
quotes, pointers, call arguments, ids, notes): secrets redacted (``text.redaction``); ANSI escape sequences,
bidi controls and the other invisible and control characters removed, line breaks (LF, CR, NEL, U+2028,
U+2029) made spaces (so reversed, hidden or forged lines cannot be made to read differently); markup made
plain (a markdown link or image shows its text and target, an HTML tag or comment is dropped). Nothing else
changes. ``displayable`` says whether a text passes it unchanged (a value that does not is refused where a
field must be shown as given, such as a suggested call's argument).
"""

from __future__ import annotations

import importlib.resources
import json
import re
import unicodedata
from collections import deque
from functools import cache, lru_cache

import re2

from diagnosis_server.text.redaction import redact_text

_EMPHASIS = re.compile(r"[*_`~]+")
_WORD = re.compile(r"[a-z0-9]+")
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


# The blocks that hold every format (Cf) and control (Cc) character of Unicode 15.
_FORMAT_BLOCKS = (
    (0x0000, 0x3000),
    (0xFE00, 0x10000),
    (0x11000, 0x14000),
    (0x1BC00, 0x1BD00),
    (0x1D100, 0x1D200),
    (0xE0000, 0xE0100),
)


@cache
def _invisible_table() -> dict[int, str | None]:
    """Format characters (Cf) and the combining grapheme joiner removed; control characters become spaces."""
    table: dict[int, str | None] = {}
    for start, end in _FORMAT_BLOCKS:
        for code in range(start, end):
            category = unicodedata.category(chr(code))
            if category == "Cf":
                table[code] = None
            elif category == "Cc":
                table[code] = " "
    table[0x034F] = None  # combining grapheme joiner (Mn, but invisible)
    for code in range(0xFE00, 0xFE10):  # variation selectors
        table[code] = None
    return table


def _ascii_homoglyph(char: str, graph: dict[str, list[str]]) -> str | None:
    """The nearest ASCII letter or digit in the homoglyph graph around ``char`` (letters for letters)."""
    want_letter = unicodedata.category(char).startswith("L")
    seen = {char}
    queue: deque[tuple[str, int]] = deque([(char, 0)])
    while queue:
        current, depth = queue.popleft()
        if depth > 3:
            break
        for other in graph.get(current, ()):
            if other in seen:
                continue
            seen.add(other)
            if len(other) == 1 and other.isascii() and other.isalnum() and other.isalpha() == want_letter:
                return other
            if len(other) == 1:
                queue.append((other, depth + 1))
    return None


@cache
def _skeleton_table() -> dict[int, str]:
    raw = importlib.resources.files("confusable_homoglyphs").joinpath("confusables.json").read_text("utf-8")
    data: dict[str, list[dict[str, str]]] = json.loads(raw)
    graph: dict[str, list[str]] = {key: [item["c"] for item in items] for key, items in data.items()}
    table: dict[int, str] = {}
    for key in graph:
        if len(key) != 1 or key.isascii():
            continue
        category = unicodedata.category(key)
        if not (category.startswith("L") or category == "Nd"):
            continue
        target = _ascii_homoglyph(key, graph)
        upper = key.upper()
        if target is None and len(upper) == 1 and upper != key:
            # A small letter whose homoglyphs are listed only for its capital (Cyrillic к and К).
            target = _ascii_homoglyph(upper, graph)
        if target is not None:
            table[ord(key)] = target.lower()
    # Small letters that fold to a letter mapped above (a casefolded text is looked up).
    for key in list(graph):
        if len(key) == 1 and not key.isascii():
            folded = key.casefold()
            if len(folded) == 1 and not folded.isascii() and ord(folded) not in table and ord(key) in table:
                table[ord(folded)] = table[ord(key)]
    # One folding for facts (read before case-folding) and matching (after): a letter folds as its case-folded
    # form does (Greek capital iota is the "i" of small iota, not an "l"), and a letter whose case-folded form
    # keeps its own script is not remapped either.
    for code in list(table):
        folded = chr(code).casefold()
        if folded != chr(code) and len(folded) == 1 and not folded.isascii():
            if ord(folded) in table:
                table[code] = table[ord(folded)]
            else:
                del table[code]
    return table


def strip_invisible(text: str) -> str:
    """``text`` without format characters (zero-width, soft hyphen, bidi controls); control characters as spaces."""
    return text.translate(_invisible_table())


def skeleton(text: str) -> str:
    """Non-ASCII homoglyphs of ASCII letters and digits replaced by their small ASCII forms (ASCII is left as is)."""
    if text.isascii():
        return text
    return text.translate(_skeleton_table())


# Texts up to this length are normalized once and remembered: the same statements, vocabulary words and
# evidence values are compared many times in a run (the guards and derivability), and again in the next run.
_REMEMBERED_LENGTH = 512
# Longer ones (a run's evidence texts: a log output, a listing) are read about ten times a run each: the last few
# are remembered too, up to a bound that keeps the memory small.
_REMEMBERED_LONG = 64 * 1024


def normalize(text: str) -> str:
    """The one comparison form of a text (see the module docstring for the steps)."""
    if len(text) <= _REMEMBERED_LENGTH:
        return _remembered(text)
    if len(text) <= _REMEMBERED_LONG:
        return _remembered_long(text)
    return _normalize(text)


@lru_cache(maxsize=1 << 15)
def _remembered(text: str) -> str:
    return _normalize(text)


@lru_cache(maxsize=128)
def _remembered_long(text: str) -> str:
    return _normalize(text)


def _normalize(text: str) -> str:
    folded = unicodedata.normalize("NFKC", text)
    folded = skeleton(strip_invisible(folded).casefold())
    folded = _EMPHASIS.sub("", folded)
    return " ".join(folded.split())


def compact(text: str) -> str:
    """``normalize(text)`` with no whitespace at all: finds a statement split across lines or items."""
    if len(text) <= _REMEMBERED_LENGTH:
        return _compact_remembered(text)
    return _normalize(text).replace(" ", "")


@lru_cache(maxsize=1 << 15)
def _compact_remembered(text: str) -> str:
    return _remembered(text).replace(" ", "")


def words(text: str) -> list[str]:
    """The normalized text's words (runs of ASCII letters and digits), in order."""
    return _WORD.findall(normalize(text))


# ECMA-48 control sequences (CSI ... final byte, OSC ... BEL or ST, and the two-byte escapes), the 8-bit CSI too.
_ANSI = re2.compile(r"\x1b\[[0-?]*[ -/]*[@-~]?|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?|\x9b[0-?]*[ -/]*[@-~]?")
_LINE_BREAKS = {0x2028: " ", 0x2029: " "}
# Markdown inline links and images ("[text](target)", "![alt](src)"), autolinks ("<https://...>"), HTML comments
# and tags ("<a href=...>", "</b>", "<!doctype>"): linear-time (RE2).
_LINK = re2.compile(r"!?\[([^\[\]\n]*)\]\(\s*([^()\s]*)[^()]*\)")
_AUTOLINK = re2.compile(r"<([a-zA-Z][a-zA-Z0-9+.-]{1,31}:[^<>\s]*)>")
_TAG = re2.compile(r"<!--(?s:.*?)-->|</?[A-Za-z!?][^<>]*>")


def display_text(text: str) -> str:
    """``text`` as it may be shown (the one display check, see the module docstring): one line, no markup."""
    text = redact_text(text)
    if "\x1b" in text or "\x9b" in text:
        text = _ANSI.sub("", text)
    text = strip_invisible(text).translate(_LINE_BREAKS)
    if "](" in text:
        text = _LINK.sub(lambda m: f"{m.group(1)} ({m.group(2)})" if m.group(2) else str(m.group(1)), text)
    if "<" in text:
        text = _TAG.sub("", _AUTOLINK.sub(lambda m: str(m.group(1)), text))
    return " ".join(text.split())


# What opens a line as a block or a label of the answer's own ("## ", "> ", "| ", "```", "Confirmed facts:", "Likely
# cause (verified):"): never the start of a statement the answer shows.
_BLOCK_OPENING = re2.compile(
    r"^(?:\s*(?:#{1,6}(?:\s|$)|>+\s?|\|\s?|`{3,}|~{3,}|(?:[-*+]|\d{1,3}[.)])\s+|"
    r"(?i:(?:confirmed facts?|likely causes?(?: \(verified\))?|possible directions?|next steps?|evidence gaps?"
    r"|what happened|verdict|status|summary)\s*:)\s*))+"
)
_TABLE_END = re2.compile(r"\s*\|\s*$")


def display_line(text: str) -> str:
    """``display_text`` of a line the answer writes as its own item (a statement, a next step): no markdown block
    or section label opens it."""
    text = display_text(text)
    stripped = _TABLE_END.sub("", _BLOCK_OPENING.sub("", text))
    return stripped.strip() or text


def displayable(text: str) -> bool:
    """Whether ``text`` passes the display check unchanged (one line of single spaces, nothing removed)."""
    return display_text(text) == text


def has_bidi_control(text: str) -> bool:
    return not BIDI_CONTROLS.isdisjoint(text)  # (a generator over the characters costs 20 times more)


@cache
def _capital_table() -> dict[int, str]:
    """Each non-ASCII letter as the ASCII letter it looks like, read before case-folding: Greek capital nu is
    "N" (its small form, "v"), and a capital or Lisu letter the confusables read as "l" is the capital "I"."""
    raw = importlib.resources.files("confusable_homoglyphs").joinpath("confusables.json").read_text("utf-8")
    data: dict[str, list[dict[str, str]]] = json.loads(raw)
    graph: dict[str, list[str]] = {key: [item["c"] for item in items] for key, items in data.items()}
    table: dict[int, str] = {}
    for key in graph:
        if len(key) != 1 or key.isascii() or not unicodedata.category(key).startswith("L"):
            continue
        target = _ascii_homoglyph(key, graph)
        if target is None:
            continue
        if target == "l" and unicodedata.category(key) != "Ll":
            target = "I"
        table[ord(key)] = target
    return table


def capital_skeleton(text: str) -> str:
    """``text`` with its homoglyphs read as ASCII letters before case-folding ("ΙGΝΟRΕ", "ꓲGNORE": "IGNORE");
    ``normalize`` folds case first (Greek capital nu is then small nu, read "v")."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFKC", text).translate(_capital_table())


@cache
def _invisible_space_table() -> dict[int, str]:
    return {code: " " for code, replacement in _invisible_table().items() if replacement is None}


def invisible_as_space(text: str) -> str:
    """``text`` with each format character (a zero-width joiner, a word joiner) read as a space: a word break some
    text hides ("ignore\\u200dall"); ``strip_invisible`` reads it as nothing ("ig\\u200bnore")."""
    return text.translate(_invisible_space_table())
