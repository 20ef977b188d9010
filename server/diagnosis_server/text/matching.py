"""Matching rule expressions on untrusted text without backtracking: RE2, and a proven-safe rest on bounded text.

Every expression a rule runs on a log line or an event message is compiled with RE2 (``google-re2``: an automaton,
time linear in the text's length whatever the text). An expression RE2 cannot take, one with a lookaround
(``NXDOMAIN(?! qr[,\\s])``), is accepted only when it is provably cheap for Python's engine (``backtrack_safe``):
no back-reference, no repeat inside a repeat (star height 1), no unbounded repeat at its start (which makes a
search quadratic), and RE2 takes it once its lookarounds are removed. It then runs only on a text where that
RE2 relaxation (a superset of what it matches) matches, and only on the first ``MAX_MATCHED_CHARS`` characters.
Every text is bounded to ``MAX_MATCHED_CHARS`` before it is matched.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, cast

import re2

MAX_MATCHED_CHARS = 4096

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False
_REPEATS = ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")
_LOOKAROUND = re.compile(r"\(\?<?[=!]")


class Match(Protocol):
    """What a rule's match gives (RE2's and Python's matches alike)."""

    def group(self, index: int = 0, /) -> str: ...

    def start(self, index: int = 0, /) -> int: ...

    def end(self, index: int = 0, /) -> int: ...


class NotLinear(ValueError):
    """An expression that could backtrack on a crafted text (the message says why)."""


_LEADING_FLAGS = re.compile(r"\(\?([aiLmsux]+)\)")


def re2_compiled(pattern: str) -> Any | None:
    """``pattern`` compiled by RE2, or None when RE2 does not take it."""
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error:
        return None


def as_alternative(pattern: str) -> str:
    """``pattern`` as one RE2 alternative: its leading global flags (``(?i)``) scoped to it, a verbose one
    (``(?x)``, which RE2 does not know) with its layout whitespace and comments removed."""
    flags, rest = "", pattern
    while (leading := _LEADING_FLAGS.match(rest)) is not None:
        flags, rest = flags + leading.group(1), rest[leading.end() :]
    if "x" in flags:
        rest = _unverbose(rest)
    kept = "".join(dict.fromkeys(f for f in flags if f in "ims"))
    return f"(?{kept}:{rest})" if kept else f"(?:{rest})"


def _unverbose(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if char == "\\":
            out.append(pattern[i : i + 2])
            i += 2
        elif char == "[":
            end = _class_end(pattern, i)
            out.append(pattern[i:end])
            i = end
        elif char == "#":
            newline = pattern.find("\n", i)
            i = n if newline < 0 else newline + 1
        elif char.isspace():
            i += 1
        else:
            out.append(char)
            i += 1
    return "".join(out)


def without_lookarounds(pattern: str) -> str:
    """``pattern`` with every lookaround group removed: it matches wherever ``pattern`` does (and more)."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        if _LOOKAROUND.match(pattern, i):
            i = _group_end(pattern, i)
            continue
        if pattern[i] == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if pattern[i] == "[":
            end = _class_end(pattern, i)
            out.append(pattern[i:end])
            i = end
            continue
        out.append(pattern[i])
        i += 1
    return "".join(out)


def _class_end(pattern: str, i: int) -> int:
    j = i + 1
    if j < len(pattern) and pattern[j] == "^":
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    while j < len(pattern) and pattern[j] != "]":
        j += 2 if pattern[j] == "\\" else 1
    return j + 1


def _group_end(pattern: str, i: int) -> int:
    depth, j = 0, i
    while j < len(pattern):
        char = pattern[j]
        if char == "\\":
            j += 2
            continue
        if char == "[":
            j = _class_end(pattern, j)
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return j


def backtrack_safe(pattern: str) -> None:
    """Raises NotLinear unless ``pattern`` has no back-reference, no repeat nested in a repeat, and no unbounded
    repeat at its start; and RE2 takes it without its lookarounds."""
    try:
        parsed = re._parser.parse(pattern)  # type: ignore[attr-defined]
    except re.error as exc:
        raise NotLinear(f"not a regular expression: {exc}") from None
    _walk(list(parsed), inside_repeat=False)
    first = _first_item(list(parsed))
    if first is not None and str(first[0]) in _REPEATS and first[1][1] > 1 and first[1][1] >= re._parser.MAXREPEAT:  # type: ignore[attr-defined]
        raise NotLinear("an unbounded repeat at its start makes every search quadratic (bound it, e.g. {0,200})")
    if re2_compiled(as_alternative(without_lookarounds(pattern))) is None:
        raise NotLinear("not RE2 syntax even without its lookarounds")


def _first_item(items: list[Any]) -> Any | None:
    for op, arg in items:
        name = str(op)
        if name in ("AT", "ASSERT", "ASSERT_NOT"):
            continue
        if name == "SUBPATTERN":
            return _first_item(list(arg[-1]))
        return (op, arg)
    return None


def _walk(items: Sequence[Any], *, inside_repeat: bool) -> None:
    for op, arg in items:
        name = str(op)
        if name in ("GROUPREF", "GROUPREF_EXISTS"):
            raise NotLinear("a back-reference cannot be matched in linear time")
        if name in _REPEATS:
            _low, high, sub = arg
            if high > 1 and inside_repeat:
                raise NotLinear("a repeat inside a repeat can backtrack exponentially")
            _walk(list(sub), inside_repeat=inside_repeat or high > 1)
        elif name == "SUBPATTERN":
            _walk(list(arg[-1]), inside_repeat=inside_repeat)
        elif name == "BRANCH":
            for branch in arg[1]:
                _walk(list(branch), inside_repeat=inside_repeat)
        elif name in ("ASSERT", "ASSERT_NOT"):
            _walk(list(arg[1]), inside_repeat=inside_repeat)


@dataclass(frozen=True, slots=True)
class _Guarded:
    """An expression RE2 cannot take (a lookaround), run by Python's engine where its RE2 relaxation matches."""

    relaxed: Any
    exact: re.Pattern[str]


class LinearPattern:
    """Alternatives matched as one expression (the leftmost match of any, the first listed on a tie), in time
    linear in the text (see the module docstring)."""

    def __init__(self, alternatives: Sequence[str]) -> None:
        converted = [as_alternative(p) for p in alternatives]
        linear = [c for c in converted if re2_compiled(c) is not None]
        self._linear = re2_compiled("|".join(linear)) if linear else None
        self._guarded: list[_Guarded] = []
        for pattern, alternative in zip(alternatives, converted, strict=True):
            if re2_compiled(alternative) is not None:
                continue
            backtrack_safe(pattern)
            relaxed = re2_compiled(as_alternative(without_lookarounds(pattern)))
            self._guarded.append(_Guarded(relaxed, re.compile(pattern)))

    @property
    def engines(self) -> tuple[str, ...]:
        """Which engine each part runs on ("re2", then "guarded" once per expression RE2 cannot take)."""
        return (("re2",) if self._linear is not None else ()) + ("guarded",) * len(self._guarded)

    def search(self, text: str, pos: int = 0) -> Match | None:
        text = text[:MAX_MATCHED_CHARS]
        found: Match | None = self._linear.search(text, pos) if self._linear is not None else None
        for guarded in self._guarded:
            if guarded.relaxed.search(text, pos) is None:
                continue
            match = guarded.exact.search(text, pos)
            if match is not None and (found is None or match.start() < found.start()):
                found = cast(Match, match)  # re.Match.group is typed "str | Any"
        return found

    def finditer(self, text: str) -> Iterator[Match]:
        """Non-overlapping matches, left to right."""
        text = text[:MAX_MATCHED_CHARS]
        position = 0
        while position <= len(text):
            match = self.search(text, position)
            if match is None:
                return
            yield match
            position = match.end() if match.end() > match.start() else match.end() + 1
