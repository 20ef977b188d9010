"""What several analyzers read of a cycle (its log lines, workloads, metric findings), made once an Evidence."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from diagnosis_server.agents.heuristic.addresses import dependencies
from diagnosis_server.agents.heuristic.analyzers.detectors import Onset, metric_findings
from diagnosis_server.agents.heuristic.analyzers.events import event_views, event_workloads
from diagnosis_server.agents.heuristic.analyzers.evidence import Evidence, workload_of
from diagnosis_server.agents.heuristic.analyzers.pods import pod_views, workloads_seen
from diagnosis_server.agents.heuristic.analyzers.signatures import log_findings
from diagnosis_server.agents.heuristic.findings import Finding
from diagnosis_server.agents.heuristic.observations import (
    Binding,
    LogLine,
    Observation,
    Series,
    log_lines,
    records,
    walk,
)
from diagnosis_server.agents.heuristic.shapes import is_object_name
from diagnosis_server.agents.heuristic.subjects import pod_aliases, prometheus_names
from diagnosis_server.conversions import JsonValue


def is_workload_name(name: str) -> bool:
    """A name a workload may have (``orders-db``), not a host outside the cluster (``api.partner.example``):
    only a workload has logs and events to fetch."""
    return "." not in name


def known_services(observations: Sequence[Observation]) -> list[str]:
    names: set[str] = set()
    for obs in observations:
        if obs.service:
            names.add(obs.service)
        for key in ("depends_on", "dependents"):
            value = obs.get(key)
            if isinstance(value, list):
                names.update(v for v in value if isinstance(v, str))
        for key in ("events", "deploys"):
            names.update(r.text("service") for r in records(obs, key) if r.text("service"))
    names.update(workloads_seen(observations))
    names.update(pod_aliases(observations))
    names.update(prometheus_names(observations))
    # The workloads log streams are labelled with (a Loki-only environment knows them so).
    names.update(line.service for obs in observations for line in log_lines(obs) if line.service)
    listed = (pod.name for pod in pod_views(observations))
    names.update(event_workloads(observations, sorted(names), listed))
    return sorted(names)


def known(evidence: Evidence) -> list[str]:
    """The workloads the outputs name, and the question's."""
    return evidence.shared(
        "known",
        lambda: sorted(
            {*known_services(evidence.observations), *(s for s in evidence.subjects if is_workload_name(s))}
        ),
    )


def workload_namespaces(observations: Sequence[Observation], lines: Sequence[LogLine]) -> dict[str, set[str]]:
    """The namespaces each workload was seen in: its pods', its Services' and controllers', its log streams' and pod
    logs' ``namespace``, and the topology's ``labels.namespace``."""
    found: dict[str, set[str]] = {}

    def add(service: str, namespace: JsonValue) -> None:
        if service and isinstance(namespace, str) and namespace:
            found.setdefault(service, set()).add(namespace)

    for pod in pod_views(observations):
        add(pod.service, pod.get("metadata", "namespace"))
    # The Services and controllers listed: where a workload is reachable by name.
    evidence = Evidence.of(observations)
    for kind in ("Service", "Deployment", "StatefulSet", "DaemonSet"):
        for obj in evidence.objects(kind):
            add(obj.name, obj.namespace)
    for obs in observations:
        if obs.tool_name == "topology.dependencies" and obs.service:
            add(obs.service, obs.get("labels", "namespace"))
    for line in lines:
        if line.obs.tool_name == "loki.query_range" and len(line.service_path) > 1:
            add(line.service, line.obs.get(*line.service_path[:-1], "namespace"))
        elif line.obs.tool_name == "kubernetes.pod_logs":
            add(line.service, line.obs.get("namespace"))
    return found


def _as_listed(lines: list[LogLine], observations: Sequence[Observation]) -> list[LogLine]:
    """A line whose workload was read off a pod's name (``kubernetes.pod_logs``' pod, a Loki stream's ``pod``
    label: its ``service_text``) belongs to the workload the pods listing names for that pod (its labels: a Helm
    release's ``session-redis`` for the pod ``session-redis-master-0`` of the StatefulSet
    ``session-redis-master``), when that name begins the pod's own name, so the line's binding still quotes the
    pod's name."""
    listed = {pod.name: pod.service for pod in pod_views(observations)}
    if not listed:
        return lines
    out: list[LogLine] = []
    for line in lines:
        pod = line.obs.text(*line.service_path) if line.service_text is not None else ""
        workload = listed.get(pod)
        if workload and workload != line.service and pod.startswith(workload + "-"):
            line = replace(line, service=workload, service_text=workload)
        out.append(line)
    return out


def lines(evidence: Evidence) -> list[LogLine]:
    """Every log line read, each of the workload the pods listing names for its pod."""
    return evidence.shared("lines", lambda: _as_listed(evidence.log_lines(), evidence.observations))


def known_addresses(observations: Sequence[Observation]) -> dict[str, tuple[str, tuple[Binding, ...]]]:
    """The addresses the outputs show to be a workload's, each with the bindings that show it: a Service's cluster
    IP (the Service's name), a pod's IP (its workload), a host an Ingress routes to a Service, and a Certificate
    named after a host (``id-acme-internal``, by that name) whose events are of a workload."""
    evidence = Evidence.of(observations)
    out: dict[str, tuple[str, tuple[Binding, ...]]] = {}
    for ingress in evidence.objects("Ingress"):
        rules = ingress.get("spec", "rules")
        for r, rule in enumerate(rules if isinstance(rules, list) else []):
            host, paths = walk(rule, ("host",)), walk(rule, ("http", "paths"))
            backend = walk(paths[0], ("backend", "service", "name")) if isinstance(paths, list) and paths else None
            if isinstance(host, str) and host and isinstance(backend, str) and is_object_name(backend):
                shown = (
                    ingress.bind("spec", "rules", r, "host"),
                    ingress.bind("spec", "rules", r, "http", "paths", 0, "backend", "service", "name"),
                )
                out.setdefault(host.lower(), (backend, shown))
    for view in event_views(observations):
        if view.object_kind == "Certificate" and view.service and "-" in view.object_name:
            out.setdefault(view.object_name, (view.service, (view.bind_object(), view.bind_service())))
    for service in evidence.objects("Service"):
        ip = service.text("spec", "clusterIP")
        if ip and ip != "None":
            out.setdefault(ip, (service.name, (service.bind_name(), service.bind("spec", "clusterIP"))))
    for pod in evidence.objects("Pod"):
        ip = pod.text("status", "podIP")
        if ip and pod.text("status", "hostIP") != ip:
            workload, binding = workload_of(pod)
            out.setdefault(ip, (workload, (binding, pod.bind("status", "podIP"))))
    return out


def logs(evidence: Evidence) -> list[Finding]:
    """What the log lines say, each line's target read off the outputs (namespaces, addresses, settings)."""

    def made() -> list[Finding]:
        read = lines(evidence)
        return log_findings(
            read,
            known(evidence),
            namespaces=workload_namespaces(evidence.observations, read),
            addresses=known_addresses(evidence.observations),
            dependencies=dependencies(evidence.observations),
        )

    return evidence.shared("logs", made)


def metrics(evidence: Evidence) -> tuple[list[Finding], list[Onset]]:
    """The built-in metric series' findings and the onsets of their changes."""

    def made() -> tuple[list[Finding], list[Onset]]:
        series = [s for s in (Series.of(o) for o in evidence.observations) if s is not None]
        return metric_findings(series)

    return evidence.shared("metrics", made)


def blamed_workloads(observations: Sequence[Observation], subjects: Sequence[str] = ()) -> list[str]:
    """The workloads the error lines read so far blame (a caller's calls to them fail), in reading order: whose
    own logs say why."""
    evidence = Evidence.of(observations, subjects)
    read = lines(evidence)
    logged = {line.service for line in read}
    # A caller's link names whom it blames; a cause read from a caller's line is about a workload not yet heard.
    found = logs(evidence)
    blamed = [f.blamed if f.blamed else f.service for f in found if f.blamed or f.service not in logged]
    return [b for b in dict.fromkeys(blamed) if b and b not in logged]
