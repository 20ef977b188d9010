"""One search for any of many literals, tried only where their rarest characters stand."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

# The space, then English letters from the most to the least frequent; any other character is rarer still.
_CHARACTER_FREQUENCY = " etaoinshrdlcumwfgypbvkjxqz"


def _rarity(char: str) -> int:
    index = _CHARACTER_FREQUENCY.find(char)
    return len(_CHARACTER_FREQUENCY) if index == -1 else index


def _unbounded(_: str) -> tuple[str, str]:
    return "", ""


def anchored_alternation(
    literals: Iterable[str], *, bounds: Callable[[str], tuple[str, str]] = _unbounded
) -> re.Pattern[str]:
    """A pattern whose ``search`` finds a match exactly when one of ``literals`` (non-empty, case-sensitive)
    is a substring of the text: ``any(literal in text for literal in literals)`` in one pass.

    Each literal is matched from its rarest character, the characters before it checked by a lookbehind
    (``ignore`` is ``g(?<=ig)nore``), and the literals are grouped by that anchor character. The regex engine
    only tries the positions where an anchor character stands: far fewer than every position, or than every
    position where a literal's first character stands (a plain ``ignore|disregard|...``).

    ``bounds`` gives, for a literal, the zero-width assertions that must hold before and after it (``(?<!\\w)``
    for a word's start): the literal is then found only where they hold.
    """
    by_anchor: dict[str, set[str]] = {}
    for literal in literals:
        at = max(range(len(literal)), key=lambda i: (_rarity(literal[i]), -i))
        start, end = bounds(literal)
        before = f"(?<={start}{re.escape(literal[: at + 1])})" if at or start else ""
        by_anchor.setdefault(literal[at], set()).add(before + re.escape(literal[at + 1 :]) + end)
    groups = []
    for anchor, rests in by_anchor.items():
        if "" in rests:  # the anchor alone is a literal: found wherever a longer one would be
            groups.append(re.escape(anchor))
        else:
            groups.append(f"{re.escape(anchor)}(?:{'|'.join(sorted(rests))})")
    return re.compile("|".join(groups))
