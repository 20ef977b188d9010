"""Request checks: each bad field is INVALID_ARGUMENT with a BadRequest field violation naming it.

Run ids: the server makes ``run-`` followed by 32 hex digits; any id of 1 to 128 characters from
``A-Z a-z 0-9 . _ : -`` is accepted when reading, so callers' own ids are not rejected needlessly.
"""

from __future__ import annotations

import functools
import re
import unicodedata

import regex
import unicodedata2

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.api.errors import invalid_argument
from diagnosis_server.limits import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE
from diagnosis_server.time_window import Window, from_proto

RUN_ID_PATTERN = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
# How much of an unknown value an error message repeats (the caller sent it; the rest says nothing).
MAX_SHOWN_CHARS = 64


def check_run_id(run_id: str, *, field: str = "run_id") -> str:
    if not run_id:
        raise invalid_argument(field, "must not be empty")
    if not RUN_ID_PATTERN.fullmatch(run_id):
        raise invalid_argument(field, "must be 1 to 128 characters of A-Z, a-z, 0-9, '.', '_', ':', '-'")
    return run_id


def check_question(question: str, *, max_chars: int) -> str:
    """The question without surrounding whitespace, checked the same way whatever the store's backend.

    INVALID_ARGUMENT when it is empty, holds a control character (NUL included; tab, line feed and
    carriage return are text), holds nothing visible (``only_invisible``), or is longer than ``max_chars``
    once trimmed.
    """
    text = question.strip()
    if not text:
        raise invalid_argument("question", "must not be empty")
    check_text(text, field="question")
    if only_invisible(text):
        raise invalid_argument("question", "must contain visible text (it holds only invisible characters)")
    if len(text) > max_chars:
        raise invalid_argument("question", f"must be at most {max_chars} characters (got {len(text)})")
    return text


_TEXT_CONTROLS = frozenset("\t\n\r")


def check_text(text: str, *, field: str) -> None:
    """INVALID_ARGUMENT naming the first control character (other than tab, LF, CR) of ``text``."""
    for position, ch in enumerate(text):
        if ch not in _TEXT_CONTROLS and unicodedata.category(ch) == "Cc":
            raise invalid_argument(field, f"must not contain control characters (U+{ord(ch):04X} at {position})")


# What shows nothing, from Unicode's own tables (the ``regex`` package's, of a newer Unicode than unicodedata's):
# Default_Ignorable_Code_Point (zero-width characters, joiners, the combining grapheme joiner, variation selectors,
# tag characters, the Hangul fillers), White_Space, every separator (Z*), other (C*) and mark (M*: with no base
# character a mark has nothing to sit on) character. R-API-2.
_INVISIBLE = regex.compile(r"[\p{Default_Ignorable_Code_Point}\p{White_Space}\p{Z}\p{C}\p{M}]")
# Fillers by their Unicode names: a name ending in FILLER or BLANK (the Hangul and Khitan fillers, the Braille blank)
# or NULL NOTEHEAD, unless the character is punctuation (a gap filler draws a line).
_FILLER_NAME = regex.compile(r"\b(?:FILLER|BLANK|NULL NOTEHEAD)$")
# Blanks whose algorithmic names cannot say so: U+18CFF, the Khitan small script's blank character (Unicode 16).
_UNNAMED_BLANKS = frozenset({"\U00018cff"})


@functools.cache
def _shows_nothing(ch: str) -> bool:
    if _INVISIBLE.match(ch):
        return True
    # (unicodedata2's tables, newer than unicodedata's: a letter of a script added since is read; a blank added
    # since, U+13441 EGYPTIAN HIEROGLYPH FULL BLANK, is a filler by its name; still unassigned: nothing shown)
    category = unicodedata2.category(ch)
    if category == "Cn" or ch in _UNNAMED_BLANKS:
        return True
    return not category.startswith("P") and _FILLER_NAME.search(unicodedata2.name(ch, "")) is not None


def only_invisible(text: str) -> bool:
    """True when no character of ``text`` shows anything."""
    return all(_shows_nothing(ch) for ch in text)


def check_scenario(scenario: str, *, known: frozenset[str] | set[str], default: str) -> str:
    """The scenario to run on: the given one if known, the default when empty."""
    if not scenario:
        return default
    if scenario not in known:
        names = ", ".join(sorted(known))
        shown = scenario if len(scenario) <= MAX_SHOWN_CHARS else scenario[:MAX_SHOWN_CHARS] + "..."
        raise invalid_argument("context.scenario", f"unknown scenario {shown!r} (known: {names})")
    return scenario


def check_target(
    scenario: str,
    environment: str,
    *,
    scenarios: frozenset[str] | set[str],
    default_scenario: str,
    environments: frozenset[str] | set[str] | tuple[str, ...],
    default_environment: str | None,
) -> tuple[str, str]:
    """(scenario, environment) a run observes: exactly one is non-empty.

    Both set is INVALID_ARGUMENT; an unknown environment is INVALID_ARGUMENT listing the known ones; neither set:
    the default environment when one is configured, else the default scenario.
    """
    if scenario and environment:
        raise invalid_argument("context", "set scenario or environment, not both")
    if environment:
        if environment not in environments:
            names = ", ".join(sorted(environments)) or "none are configured"
            shown = environment if len(environment) <= MAX_SHOWN_CHARS else environment[:MAX_SHOWN_CHARS] + "..."
            raise invalid_argument("context.environment", f"unknown environment {shown!r} (known: {names})")
        return "", environment
    if not scenario and default_environment:
        return "", default_environment
    if not scenario and environments:
        # No demo by accident: with environments configured, a request naming neither is not answered from a
        # recorded scenario.
        names = ", ".join(sorted(environments))
        raise invalid_argument(
            "context.environment", f"name an environment (configured: {names}; none is the default) or a scenario"
        )
    return check_scenario(scenario, known=scenarios, default=default_scenario), ""


def check_time_window(window: run_pb2.TimeWindow, *, field: str = "context.time_window") -> Window | None:
    """The request's window (None when it gives none): both bounds, start before end, else INVALID_ARGUMENT
    naming the field."""
    if not window.HasField("start") and not window.HasField("end"):
        return None
    for bound in ("start", "end"):
        if not window.HasField(bound):
            raise invalid_argument(f"{field}.{bound}", "must be set when the other bound is")
    given = from_proto(window)
    assert given is not None
    if not given.start < given.end:
        raise invalid_argument(field, "start must be before end")
    return given


def page_size(requested: int) -> int:
    """AIP-158: 0 means the default (20), larger than 100 means 100, negative is an error."""
    if requested < 0:
        raise invalid_argument("page_size", "must not be negative")
    if requested == 0:
        return DEFAULT_PAGE_SIZE
    return min(requested, MAX_PAGE_SIZE)


def check_status_filter(status: int) -> int:
    if status not in run_pb2.RunStatus.DESCRIPTOR.values_by_number:
        raise invalid_argument("status", f"unknown run status {status}")
    return status


def check_verdict_filter(verdict: int) -> int:
    if verdict not in contracts_pb2.Verdict.DESCRIPTOR.values_by_number:
        raise invalid_argument("verdict", f"unknown verdict {verdict}")
    return verdict


def check_after_sequence(after_sequence: int) -> int:
    if after_sequence < 0:
        raise invalid_argument("after_sequence", "must not be negative")
    return after_sequence
