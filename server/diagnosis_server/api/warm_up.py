"""Start-up warm-up: what a run's first use would otherwise build, built before the server serves, so that the first
``Diagnose`` after a start costs what the next ones do (about half as much CPU again without it).

Built here: each scenario pack's tool specs (every tool's arguments model and JSON Schema: pydantic makes each
in milliseconds), and the text comparison tables (invisible characters, homoglyphs, letter-like symbols, the
neutral vocabulary and lexicon).
The heuristic rules are read and compiled by the provider's own start-up (``create_provider``).
"""

from __future__ import annotations

from collections.abc import Iterable

from diagnosis_server.api.components import ToolsFor
from diagnosis_server.text.language import letter_like, lexicon, vocabulary
from diagnosis_server.text.normalize import normalize

# Holds an invisible character and a homoglyph (a Cyrillic a): normalizing it builds both tables.
_SAMPLE = "warm-up\u200b \u0430"


def warm_up(tools_for: ToolsFor, scenarios: Iterable[str]) -> None:
    for name in scenarios:
        tools_for(name).toolset.specs()
    normalize(_SAMPLE)
    vocabulary()
    lexicon()  # the English word list loads in about half a second
    letter_like(_SAMPLE)
