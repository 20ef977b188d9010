"""A finding: one thing a detector saw, phrased so its concrete facts are in its own bindings.

Every service name, metric name, number, timestamp and quoted string a statement holds comes from the
matched text of one of its bindings, so the derivability check finds all of them (direct_observation).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TypeVar

from diagnosis_server.agents.heuristic.observations import Binding, BindingError

# Fixed wording: a healthy headline signal, and the clause that turns an observation into its own cause claim.
HEALTHY_MARK = "stayed within its baseline"
CAUSE_CLAUSE = ", which explains the observed symptoms"


class Role(enum.Enum):
    SYMPTOM = "symptom"  # what users feel: errors, latency, rejected work
    LINK = "link"  # a caller's failures point at another service
    CAUSE = "cause"  # a failure mechanism that explains the symptoms
    SUPPORT = "support"  # an observation that backs or explains a cause
    HYPOTHESIS = "hypothesis"  # a weak or unrelated-looking observation (a red herring candidate)
    HEALTHY = "healthy"  # a headline signal within its baseline


@dataclass(frozen=True, slots=True)
class Finding:
    kind: str
    role: Role
    service: str
    statement: str
    bindings: tuple[Binding, ...]
    # Ranks causes: a failure the platform reports outright (OOMKilled, FailedMount) beats a correlation.
    strength: int = 0
    onset: datetime | None = None
    # For a link: the service the caller's failures point at.
    blamed: str = ""
    # The pod an event or status is about, when it is about one (a later healthy state of it settles it).
    pod: str = ""
    # The container a status is about, when it is about one.
    container: str = ""
    # What the platform or the line said, verbatim and short (a reason, the start of a message): the cause
    # claim carries it, so the conclusion names the mechanism and not only its kind.
    detail: str = ""
    # Kinds of other findings that make this one a cause (its rule's ``cause_with``), of the same workload only
    # when ``cause_with_own`` (its rule's ``cause_with_own``).
    cause_with: tuple[str, ...] = ()
    cause_with_own: bool = False
    # The subject as the observation writes it, when that is not the workload (a host the line dials, whose
    # workload only a naming convention shows): the cause claim, a conclusion, names the workload instead.
    subject_as: str = ""

    def as_role(self, role: Role) -> Finding:
        return replace(self, role=role)

    def with_statement(self, statement: str) -> Finding:
        return replace(self, statement=statement)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.kind, self.service, self.blamed)


def quote(text: str) -> str:
    """``text`` in the first quote character it does not contain (so a checker reads it as one fact). A text that
    holds all three is still data, never prose: its double quotes become single ones inside double quotes (no
    longer verbatim, so a checker cannot ground it, and the claim is not shown)."""
    for mark in ('"', "'", "`"):
        if mark not in text:
            return f"{mark}{text}{mark}"
    return '"' + text.replace('"', "'") + '"'


BRIEF = 90


_SPACE = re.compile(r"\s")
# What an excerpt's cut leaves at its end: whitespace of any kind (a no-break space too) and separators.
_TRAILING = re.compile(r"[\s,;:]+\Z")


def excerpt(text: str, limit: int = BRIEF) -> str:
    """The start of ``text``, cut at whitespace within ``limit`` characters: a verbatim substring of it (a
    binding may point at it), newlines and all. ``one_line`` is how a statement shows it."""
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text[:limit]
    spaces = [m.start() for m in _SPACE.finditer(cut) if m.start() >= limit // 3]
    return _TRAILING.sub("", cut[: spaces[-1]] if spaces else cut)


def ending(text: str, limit: int = BRIEF) -> str:
    """The end of ``text``, from a word start within ``limit`` characters of it: a verbatim substring. A wrapped
    error ("failed to create task: ...: exec: "gunicorn": executable file not found in $PATH") says its root
    cause last."""
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text[-limit:]
    space = _SPACE.search(cut, 0, len(cut) * 2 // 3)
    return cut[space.end() :] if space else cut


def one_line(text: str) -> str:
    return " ".join(text.split())


LEAD = 30


def around(text: str, start: int, end: int, limit: int = BRIEF) -> str:
    """The part of ``text`` around a match at ``start:end``: from a word start at most ``LEAD`` characters
    before it, through the match, within ``limit`` characters where the match allows (verbatim)."""
    begin = max(0, start - LEAD)
    if begin > 0:
        space = _SPACE.search(text, begin, start)
        begin = space.end() if space else start
    rest = text[begin:]
    cut = excerpt(rest, limit)
    if len(rest) - len(rest.lstrip()) + len(cut) >= end - begin:
        return cut
    # The match runs past where the limit cuts: the part through the match's end, the match whole.
    return text[begin:end].strip()


def cause_statement(finding: Finding) -> str:
    """The cause claim of a cause finding: its observation with its short verbatim detail (when it has one,
    ``Finding.detail``) instead of the whole quoted evidence, and what it explains.

    An observation and a conclusion are different claims: the cause claim is bound to the same recorded
    values as the observation, so it is a reasonable inference resting on it, never a confirmed fact.
    """
    if finding.detail:
        short = finding.statement.split(" (", 1)[0].rstrip(" ,;") + f" ({quote(one_line(finding.detail))})"
    elif not any(mark in finding.statement for mark in "\"'`"):
        # A statement of values read (a metric against its limit) quotes nothing: it is its own detail.
        short = finding.statement
    else:
        short = finding.statement.split(" (", 1)[0].rstrip(" ,;")
    if finding.subject_as and short.startswith(finding.subject_as + " "):
        short = finding.service + short[len(finding.subject_as) :]
    return short + CAUSE_CLAUSE


_Item = TypeVar("_Item")


def first_of_each_key(
    items: Iterable[_Item], analyzers: Sequence[Callable[[_Item], Finding | None]], seen: set[tuple[str, str, str]]
) -> list[Finding]:
    """Every analyzer over every item, keeping the first finding of each key (``seen`` holds the keys taken); an
    item an analyzer cannot bind (BindingError) costs that one finding."""
    out: list[Finding] = []
    for item in items:
        for analyzer in analyzers:
            try:
                finding = analyzer(item)
            except BindingError:
                continue
            if finding is not None and finding.key not in seen:
                seen.add(finding.key)
                out.append(finding)
    return out
