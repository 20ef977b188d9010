"""The cluster analyzers, registered in one list: each is ``Evidence -> findings``; a new one is a module here and
one line in ``ANALYZERS``.

``cluster_findings`` builds the cycle's ``Evidence`` once and runs every analyzer over it (one finding per kind,
workload and blamed workload). ``current_only`` applies what they found about time: a condition an analyzer shows
has ended (a FailedCreate whose ReplicaSet now has its pods ready, a FailedScheduling followed by the pod's
scheduling) is context, never a cause, whichever analyzer reported it (R-V-4).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import structlog

from diagnosis_server.agents.heuristic.analyzers import (
    admission,
    credentials,
    infrastructure,
    network_policy,
    performance,
    port_protocol,
    runtime,
    scheduling,
    service_missing,
    service_routing,
    startup,
)
from diagnosis_server.agents.heuristic.analyzers.evidence import Evidence
from diagnosis_server.agents.heuristic.findings import Finding, Role
from diagnosis_server.agents.heuristic.observations import BindingError, Observation

log = structlog.get_logger(__name__)

Analyzer = Callable[[Evidence], list[Finding]]

ANALYZERS: tuple[Analyzer, ...] = (
    service_missing.analyze,
    service_routing.analyze,
    scheduling.analyze,
    admission.analyze,
    startup.analyze,
    runtime.analyze,
    infrastructure.analyze,
    performance.analyze,
    credentials.analyze,
    network_policy.analyze,
    port_protocol.analyze,
)
# Kinds of the event and container rules' findings that an ended condition of a cluster analyzer settles.
SETTLES: dict[str, frozenset[str]] = {
    "ended_failed_create": frozenset({"quota"}),
    "ended_scheduling": frozenset({"unschedulable"}),
}


def cluster_findings(observations: Sequence[Observation]) -> list[Finding]:
    evidence = Evidence.of(observations)
    if not evidence.by_kind:
        return []
    out: list[Finding] = []
    seen: set[tuple[str, str, str]] = set()
    for analyze in ANALYZERS:
        try:
            found = analyze(evidence)
        except (BindingError, LookupError, TypeError, ValueError, AttributeError) as exc:
            # An object of a shape the analyzer does not expect costs its findings, never the cycle.
            log.warning("cluster_analyzer_failed", analyzer=analyze.__module__, error=type(exc).__name__)
            continue
        for finding in found:
            if finding.key not in seen:
                seen.add(finding.key)
                out.append(finding)
    return out


def current_only(findings: list[Finding]) -> list[Finding]:
    """The findings with what has ended demoted: a cause or symptom of a kind an ended condition settles (an
    event rule's FailedCreate or FailedScheduling finding), about the same workload, becomes a hypothesis."""
    ended = {(kind, f.service) for f in findings for kind in SETTLES.get(f.kind, ())}
    if not ended:
        return findings
    return [
        f.as_role(Role.HYPOTHESIS) if (f.kind, f.service) in ended and f.role in (Role.CAUSE, Role.SYMPTOM) else f
        for f in findings
    ]
