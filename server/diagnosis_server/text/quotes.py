"""One reading of what a statement quotes, so that a span the word checks skip is always a fact the evidence must hold.

A quote is a double, curly, backtick or single-quoted span of 2 to ``MAX_QUOTE`` characters; a single quote is one
only where no letter or digit of any script stands beside it (``client's``, ``５０２'...'`` and ``ѕvс'...'`` are no
quotes, however their characters fold).
"""

from __future__ import annotations

import re

MAX_QUOTE = 2000
# (a letter or digit of any script: ``[^\W_]``)
QUOTED = re.compile(
    rf"\"([^\"]{{2,{MAX_QUOTE}}})\"|“([^”]{{2,{MAX_QUOTE}}})”|`([^`]{{2,{MAX_QUOTE}}})`"
    rf"|(?<![^\W_])'([^']{{2,{MAX_QUOTE}}})'(?![^\W_])|(?<![^\W_])‘([^’]{{2,{MAX_QUOTE}}})’(?![^\W_])"
)


def quoted_texts(text: str) -> list[str]:
    """The texts ``text`` quotes, in order."""
    return [next(g for g in match.groups() if g) for match in QUOTED.finditer(text)]


def unquoted(text: str) -> str:
    """``text`` with each quote replaced by a space."""
    return QUOTED.sub(" ", text)
