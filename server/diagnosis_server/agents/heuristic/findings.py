"""A finding: one thing a detector saw, phrased so its concrete facts are in its own bindings.

Every service name, metric name, number, timestamp and quoted string a statement holds comes from the
matched text of one of its bindings, so the derivability check finds all of them (direct_observation).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from datetime import datetime

from diagnosis_server.agents.heuristic.observations import Binding

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
    # What the platform or the line said, verbatim and short (a reason, the start of a message): the cause
    # claim carries it, so the conclusion names the mechanism and not only its kind.
    detail: str = ""

    def as_role(self, role: Role) -> Finding:
        return replace(self, role=role)

    def with_statement(self, statement: str) -> Finding:
        return replace(self, statement=statement)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.kind, self.service, self.blamed)


def quote(text: str) -> str:
    """``text`` in the first quote character it does not contain (so a checker reads it as one fact)."""
    for mark in ('"', "'", "`"):
        if mark not in text:
            return f"{mark}{text}{mark}"
    return text


BRIEF = 90


def brief(text: str, limit: int = BRIEF) -> str:
    """``text`` on one line, cut at a word boundary within ``limit`` characters (a part of it, verbatim but for
    whitespace)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ", limit // 2)
    return (cut[:space] if space > 0 else cut).rstrip(" ,;:")


def cause_statement(finding: Finding) -> str:
    """The cause claim of a cause finding: its observation with its short verbatim detail (when it has one,
    ``Finding.detail``) instead of the whole quoted evidence, and what it explains.

    An observation and a conclusion are different claims: the cause claim is bound to the same recorded
    values as the observation, so it is a reasonable inference resting on it, never a confirmed fact.
    """
    short = finding.statement.split(" (", 1)[0].rstrip(" ,;")
    if finding.detail:
        short += f" ({quote(finding.detail)})"
    return short + CAUSE_CLAUSE
