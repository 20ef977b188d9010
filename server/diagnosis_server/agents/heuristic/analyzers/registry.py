"""The analyzers, registered in one list: each is ``Evidence -> findings``; a new one is a module here and one line
in ``ANALYZERS``.

``analyze_all`` builds the cycle's ``Evidence`` once and runs every analyzer over it, in the list's order (a
finding an earlier analyzer stated is not stated again). ``current_only`` applies what they found about time: a
condition an analyzer shows has ended (a FailedCreate whose ReplicaSet now has its pods ready, a FailedScheduling
followed by the pod's scheduling) is context, never a cause, whichever analyzer reported it (R-V-4).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import structlog

from diagnosis_server.agents.heuristic.analyzers import (
    admission,
    credentials,
    deploys,
    dns_policy,
    events,
    infrastructure,
    k8s_nodes,
    kernel_oom,
    network_policy,
    performance,
    pods,
    port_protocol,
    prometheus_health,
    prometheus_results,
    reads,
    rollouts,
    runtime,
    scheduling,
    service_missing,
    service_routing,
    startup,
    wrong_address,
)
from diagnosis_server.agents.heuristic.analyzers.evidence import Evidence
from diagnosis_server.agents.heuristic.findings import Finding, Role
from diagnosis_server.agents.heuristic.observations import BindingError, Observation

log = structlog.get_logger(__name__)

Analyzer = Callable[[Evidence], list[Finding]]


# The source readers': each reads one kind of output (metric series, pods, events, log lines, ...).
def _metrics(evidence: Evidence) -> list[Finding]:
    return reads.metrics(evidence)[0]


def _prometheus(evidence: Evidence) -> list[Finding]:
    # The same series may be read twice (metrics.query and Prometheus): one finding of a kind per service.
    read = {(f.kind, f.service, f.role) for f in reads.metrics(evidence)[0]}
    found = prometheus_results.prometheus_findings(evidence.observations)
    return [f for f in found if (f.kind, f.service, f.role) not in read]


def _health(evidence: Evidence) -> list[Finding]:
    return prometheus_health.health_findings(evidence.observations)


def _pods(evidence: Evidence) -> list[Finding]:
    return [*pods.pod_findings(evidence.observations), *pods.ready_findings(evidence.observations)]


def _events(evidence: Evidence) -> list[Finding]:
    return events.event_findings(evidence.observations, reads.known(evidence))


def _nodes(evidence: Evidence) -> list[Finding]:
    return k8s_nodes.node_findings(evidence.observations)


def _kernel_oom(evidence: Evidence) -> list[Finding]:
    return kernel_oom.kernel_oom_findings(evidence.observations, reads.lines(evidence))


def _deploys(evidence: Evidence) -> list[Finding]:
    return deploys.deploy_findings(evidence.observations, reads.metrics(evidence)[1], reads.lines(evidence))


def _rollouts(evidence: Evidence) -> list[Finding]:
    return rollouts.rollout_findings(evidence.observations)


ANALYZERS: tuple[Analyzer, ...] = (
    _metrics,
    _prometheus,
    _health,
    _pods,
    _events,
    _nodes,
    reads.logs,
    _kernel_oom,
    _deploys,
    _rollouts,
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
    wrong_address.analyze,
    dns_policy.analyze,
)
# Kinds of the event and container rules' findings that an ended condition of a cluster analyzer settles.
SETTLES: dict[str, frozenset[str]] = {
    "ended_failed_create": frozenset({"quota"}),
    "ended_scheduling": frozenset({"unschedulable"}),
}


def analyze_all(observations: Sequence[Observation], subjects: Sequence[str] = ()) -> list[Finding]:
    """Every analyzer's findings over the cycle's outputs; the question's workloads are known names too."""
    evidence = Evidence.of(observations, subjects)
    out: list[Finding] = []
    seen: set[tuple[tuple[str, str, str], str]] = set()
    for analyze in ANALYZERS:
        try:
            found = analyze(evidence)
        except (BindingError, LookupError, TypeError, ValueError, AttributeError) as exc:
            # An object of a shape the analyzer does not expect costs its findings, never the cycle.
            log.warning("analyzer_failed", analyzer=analyze.__qualname__, error=type(exc).__name__)
            continue
        # What an earlier analyzer said of a workload is not said again; one analyzer's own findings all stand.
        new = [f for f in found if (f.key, f.statement) not in seen]
        seen.update((f.key, f.statement) for f in new)
        out += new
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
