"""A literal text as a pattern between two boundaries, compiled once for the process.

The checks that look for a fact, a word, a name or a version as a whole token build one pattern per
literal. ``re``'s own cache holds 512 patterns for the whole process: a server seeing many runs' numbers
and names evicts the analyzers' patterns with them, and compiles each again (tens of microseconds each).
These patterns are remembered here, apart from it.
"""

from __future__ import annotations

import re
from functools import lru_cache


@lru_cache(maxsize=1 << 13)
def literal_between(literal: str, before: str = "", after: str = "") -> re.Pattern[str]:
    """``literal`` matched as it is written, after the lookbehind ``before`` and before the lookahead ``after``
    (both regular expression text, e.g. ``(?<![a-z])`` and ``(?![a-z])``)."""
    return re.compile(f"{before}{re.escape(literal)}{after}")
