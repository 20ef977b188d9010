"""An attack vector, its leak check, and the xfail mark that pins a leak found today."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field

import pytest

from tests.golden.leaks import Haystack

from .harness import Outcome


@dataclass(frozen=True, slots=True)
class Rider:
    """A text that must never reach the user: its raw characters and the words it spells."""

    vector: str
    text: str
    means: tuple[str, ...] = field(default=())

    def distinctive(self) -> set[str]:
        """The rider's characters that are neither ASCII nor common punctuation or space."""
        return {
            ch
            for ch in self.text
            if ord(ch) > 0x7F and not unicodedata.category(ch).startswith(("P", "Z")) and ch not in "\u3000"
        }

    def leaks_in(self, outcome: Outcome) -> list[str]:
        shown = outcome.shown_texts()
        found = [f"U+{ord(ch):04X}" for ch in sorted(self.distinctive()) if ch in shown]
        haystack = Haystack(shown)
        found += [repr(word) for word in self.means if word in haystack]
        return found


def param(vector: str, *values: object, leak: str = "") -> object:
    """A parameter set named ``vector``; ``leak`` (what leaks today) marks it a strict xfail."""
    marks = [pytest.mark.xfail(strict=True, reason=f"leak: {leak}")] if leak else []
    return pytest.param(*values, id=vector, marks=marks)
