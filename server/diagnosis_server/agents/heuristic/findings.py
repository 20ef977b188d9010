"""A finding: one thing a detector saw, phrased so its concrete facts are in its own bindings.

Every service name, metric name, number, timestamp and quoted string a statement holds comes from the
matched text of one of its bindings, so the derivability check finds all of them (direct_observation).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from datetime import datetime

from diagnosis_server.agents.heuristic.observations import Binding

# Fixed wording the heuristic Composer recognises in verified statements.
ROOT_CAUSE_CLAUSE = ", which is the root cause of the incident"
ROOT_CAUSE_MARK = "which is the root cause"
HEALTHY_MARK = "stayed within its baseline"


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


def as_root_cause(finding: Finding) -> Finding:
    if ROOT_CAUSE_MARK in finding.statement:
        return finding
    return finding.with_statement(finding.statement + ROOT_CAUSE_CLAUSE)
