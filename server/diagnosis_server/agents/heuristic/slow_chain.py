"""A latency chain with no error anywhere: a slow workload's dependencies read, and the deepest slow one named.

When a workload's latency rises and nothing fails (no error line, no failing pod), the users meet the slowness of
whatever it calls. ``slow_dependency_calls`` reads what the topology says it calls, ``SLOW_HOPS`` deep (at most
``MAX_DEPENDENCIES`` a workload, external services left out): each one's description, then its latency series and
its log lines at every level (a database's slow statements are ``LOG``/``INFO`` lines). ``slow_cause`` then makes
the slowness of the deepest slow workload that a slow caller reaches through the topology the cause, stated with
its own series or line (R-V-4: a correlation along the recorded dependencies, hence a low strength).
"""

from __future__ import annotations

from collections.abc import Sequence

from diagnosis_server.agents.heuristic.analyzers.evidence import Evidence
from diagnosis_server.agents.heuristic.analyzers.reads import logs, metrics
from diagnosis_server.agents.heuristic.findings import Finding, Role
from diagnosis_server.agents.heuristic.observations import Observation
from diagnosis_server.agents.heuristic.signals import LATENCY, metric_family
from diagnosis_server.conversions import JsonObject

SLOW_HOPS = 2
MAX_DEPENDENCIES = 3
# Findings that say a workload is slow: a latency series above its baseline, a line that reports a slow call.
SLOW_KINDS = frozenset({"latency", "slow_calls"})
_TOPOLOGY = "topology.dependencies"


def _described(observations: Sequence[Observation]) -> dict[str, Observation]:
    return {o.text("service"): o for o in observations if o.tool_name == _TOPOLOGY and o.text("service")}


def _calls_of(described: Observation) -> list[str]:
    value = described.get("depends_on")
    return [v for v in value if isinstance(v, str)][:MAX_DEPENDENCIES] if isinstance(value, list) else []


def _only_slow(findings: Sequence[Finding]) -> set[str]:
    """The slow workloads, when slowness is all that is wrong: no cause, no failing call, no other symptom (an
    error rate, an error line) is found."""
    if any(f.role in (Role.CAUSE, Role.LINK) for f in findings):
        return set()
    symptoms = [f for f in findings if f.role is Role.SYMPTOM]
    if any(f.kind not in SLOW_KINDS for f in symptoms):
        return set()
    return {f.service for f in symptoms}


def _slow_read(observations: Sequence[Observation]) -> set[str]:
    evidence = Evidence.of(observations)
    return _only_slow([*metrics(evidence)[0], *logs(evidence)])


def slow_dependency_calls(observations: Sequence[Observation], tools: Sequence[str]) -> list[tuple[str, JsonObject]]:
    """The next reads down the topology from the slow workloads: a dependency's description, then its latency
    series and its log lines; none when anything fails (the failure is followed instead)."""
    slow = _slow_read(observations) if _TOPOLOGY in tools else set()
    if not slow:
        return []
    described = _described(observations)
    made = {(o.tool_name, str(sorted(o.arguments.items()))) for o in observations}
    calls: list[tuple[str, JsonObject]] = []
    frontier = [s for s in sorted(slow) if s in described]
    seen = set(frontier)
    for _ in range(SLOW_HOPS):
        following: list[str] = []
        for workload in frontier:
            for dependency in _calls_of(described[workload]):
                if dependency in seen:
                    continue
                seen.add(dependency)
                about = described.get(dependency)
                if about is None:
                    calls.append((_TOPOLOGY, {"service": dependency}))
                    continue
                if about.text("kind") == "external":
                    continue
                following.append(dependency)
                names = about.get("metrics")
                for metric in names if isinstance(names, list) else []:
                    if isinstance(metric, str) and metric_family(metric) == LATENCY and "metrics.query" in tools:
                        calls.append(("metrics.query", {"service": dependency, "metric": metric}))
                if "logs.search" in tools:
                    calls.append(("logs.search", {"service": dependency}))
        frontier = following
    return [(t, a) for t, a in calls if (t, str(sorted(a.items()))) not in made]


def slow_cause(findings: list[Finding], observations: Sequence[Observation]) -> list[Finding]:
    """No cause found and no failure: the deepest slow workload a slow caller reaches through the recorded
    topology is the cause, with its own slow line (else its series) as the statement."""
    services = _only_slow(findings)
    if not services:
        return findings
    slow = [f for f in findings if f.role is Role.SYMPTOM]
    described = _described(observations)

    def reached(start: str) -> list[str]:
        out: list[str] = []
        frontier = [start]
        for _ in range(SLOW_HOPS):
            following = []
            for workload in frontier:
                if workload in described:
                    following += [d for d in _calls_of(described[workload]) if d not in out and d != start]
            out += following
            frontier = following
        return out

    deepest = ""
    for caller in sorted(services):
        for dependency in reversed(reached(caller)):
            if dependency in services and (not deepest or dependency in reached(deepest)):
                deepest = dependency
                break
    if not deepest:
        return findings
    own = sorted((f for f in slow if f.service == deepest), key=lambda f: 0 if f.kind == "slow_calls" else 1)
    chosen = own[0]
    cause = Finding("slow_dependency", Role.CAUSE, deepest, chosen.statement, chosen.bindings, 2, onset=chosen.onset)
    return [cause if f is chosen else f for f in findings]
