"""Runtime: a probe aimed at a port no container has, a container killed at its memory limit, a workload scaled
to zero replicas behind a Service.

- The kubelet's Unhealthy text ('Liveness probe failed: Get "http://10.244.1.5:8081/healthz": dial tcp
  10.244.1.5:8081: connect: connection refused') read by the rules file's ``runtime`` rules, joined to the pod's
  own probe (its port) and its container's ports, while the pod is not ready or restarts.
- A container whose last termination is OOMKilled, waiting to restart or not ready now, with its memory limit.
- A Deployment with ``spec.replicas`` 0 whose pod template a Service selects.
"""

from __future__ import annotations

import re

from diagnosis_server.agents.heuristic.analyzers.evidence import Evidence, Obj, workload_of
from diagnosis_server.agents.heuristic.analyzers.joined import joined, said_binding
from diagnosis_server.agents.heuristic.analyzers.rules import ClusterRule, current_rules
from diagnosis_server.agents.heuristic.findings import Finding
from diagnosis_server.agents.heuristic.observations import Binding, walk
from diagnosis_server.agents.heuristic.shapes import is_container_name, is_http_path, is_port, is_quantity

PROBES = {"Liveness": "livenessProbe", "Readiness": "readinessProbe", "Startup": "startupProbe"}


def _troubled(pod: Obj) -> bool:
    statuses = pod.get("status", "containerStatuses")
    for status in statuses if isinstance(statuses, list) else []:
        restarts = walk(status, ("restartCount",))
        if not walk(status, ("ready",)) or (isinstance(restarts, int) and restarts > 0):
            return True
    return False


def _probe_port(pod: Obj, probe: str) -> tuple[int, str, tuple[str | int, ...]] | None:
    containers = pod.get("spec", "containers")
    for c, container in enumerate(containers if isinstance(containers, list) else []):
        spec = container.get(PROBES[probe]) if isinstance(container, dict) else None
        if not isinstance(spec, dict):
            continue
        for handler in ("httpGet", "tcpSocket", "grpc"):
            port = walk(spec, (handler, "port"))
            if port is not None:
                # A port that is not one (a number 1-65535 or a port's name) is never written: no probe finding.
                if not is_port(port):
                    return None
                return c, str(port), ("spec", "containers", c, PROBES[probe], handler, "port")
    return None


def _declared(pod: Obj, c: int) -> list[tuple[int, str]]:
    ports = pod.get("spec", "containers", c, "ports")
    out: list[tuple[int, str]] = []
    for p, port in enumerate(ports if isinstance(ports, list) else []):
        if isinstance(port, dict) and is_port(port.get("containerPort")):
            out.append((p, str(port["containerPort"])))
    return out


def _probe(pod: Obj, rule: ClusterRule, match: re.Match[str], event: Obj) -> Finding | None:
    probe = match.group("probe")
    found = _probe_port(pod, probe)
    service, service_binding = workload_of(pod)
    said, said_bound = said_binding(event.bind("message"), event.text("message"))
    if found is None:
        return None
    c, port, path = found
    name = pod.text("spec", "containers", c, "name")
    if not is_container_name(name):
        return None  # never a name in a sentence
    base = [
        service_binding,
        pod.bind_name(),
        pod.bind("spec", "containers", c, "name"),
        *([said_bound] if said_bound else []),
    ]
    declared = _declared(pod, c)
    names = {str(p.get("name")) for p in (pod.get("spec", "containers", c, "ports") or []) if isinstance(p, dict)}  # type: ignore[union-attr]
    if rule.kind == "probe_refused" and declared and port not in {d for _, d in declared} and port not in names:
        p, number = declared[0]
        facts = f"{probe.lower()} probe of container {name} checks port {port}; the port of the container is {number}"
        bindings = [*base, pod.bind(*path), pod.bind("spec", "containers", c, "ports", p, "containerPort")]
        return joined(
            "probe_wrong_port",
            service,
            "fails its probe: the probe checks a port the container does not use",
            facts,
            bindings,
            said=said,
            pod=pod.name,
        )
    facts = f"{probe.lower()} probe of container {name} checks port {port}"
    bindings = [*base, pod.bind(*path)]
    # An HTTP probe answered with an error status: the path it asks for is the one the server does not serve.
    asked = pod.text(*path[:-1], "path")
    if rule.kind == "probe_status" and path[-2] == "httpGet" and is_http_path(asked):
        facts = f"{probe.lower()} probe of container {name} asks for path {asked} on port {port}"
        bindings.append(pod.bind(*path[:-1], "path"))
    return joined(rule.kind, service, rule.phrase, facts, bindings, said=said, strength=3, pod=pod.name)


def _probes(evidence: Evidence, rules: tuple[ClusterRule, ...]) -> list[Finding]:
    out: list[Finding] = []
    for event in evidence.objects("Event"):
        if event.text("reason") != "Unhealthy" or event.text("involvedObject", "kind") != "Pod":
            continue
        pod = evidence.named("Pod", event.text("involvedObject", "name"), event.namespace)
        if pod is None or not _troubled(pod):
            continue
        for rule in rules:
            match = rule.compiled.search(event.text("message"))
            if match is not None:
                finding = _probe(pod, rule, match, event)
                if finding is not None:
                    out.append(finding)
                break
    return out


def _oom(evidence: Evidence) -> list[Finding]:
    out: list[Finding] = []
    for pod in evidence.objects("Pod"):
        statuses = pod.get("status", "containerStatuses")
        for s, status in enumerate(statuses if isinstance(statuses, list) else []):
            if not isinstance(status, dict):
                continue
            for state in ("lastState", "state"):
                if pod.text("status", "containerStatuses", s, state, "terminated", "reason") != "OOMKilled":
                    continue
                if status.get("ready") and state == "lastState":
                    continue
                name = str(status.get("name") or "")
                if not is_container_name(name):
                    continue  # never a name in a sentence
                containers = pod.get("spec", "containers")
                c = next(
                    (
                        i
                        for i, x in enumerate(containers if isinstance(containers, list) else [])
                        if isinstance(x, dict) and x.get("name") == name
                    ),
                    -1,
                )
                limit = pod.text("spec", "containers", c, "resources", "limits", "memory") if c >= 0 else ""
                if not limit:
                    continue
                service, service_binding = workload_of(pod)
                # The limit is bound either way; written only when it is a quantity.
                shown = f" {limit}" if is_quantity(limit) else ""
                facts = f"container {name} of pod {pod.name} was OOMKilled at its memory limit{shown}"
                bindings: list[Binding] = [
                    service_binding,
                    pod.bind_name(),
                    pod.bind("status", "containerStatuses", s, "name"),
                    pod.bind("status", "containerStatuses", s, state, "terminated", "reason"),
                    pod.bind("spec", "containers", c, "resources", "limits", "memory"),
                ]
                out.append(joined("memory_limit", service, "runs out of memory", facts, bindings, pod=pod.name))
                break
    return out


def _zero(evidence: Evidence) -> list[Finding]:
    out: list[Finding] = []
    for deployment in evidence.objects("Deployment"):
        if deployment.get("spec", "replicas") != 0:
            continue
        template = deployment.get("spec", "template", "metadata", "labels")
        labels = {str(k): str(v) for k, v in template.items()} if isinstance(template, dict) else {}
        for service in evidence.objects("Service", deployment.namespace):
            selector = service.get("spec", "selector")
            if isinstance(selector, dict) and selector and all(labels.get(str(k)) == v for k, v in selector.items()):
                facts = (
                    f"deployment {deployment.name} has 0 replicas and Service {service.name} has the selector of "
                    "its pods"
                )
                bindings = [deployment.bind_name(), deployment.bind("spec", "replicas"), service.bind_name()]
                out.append(
                    joined("zero_replicas", deployment.name, "serves nothing: it is scaled to zero", facts, bindings)
                )
                break
    return out


def analyze(evidence: Evidence) -> list[Finding]:
    return [*_probes(evidence, current_rules().of_family("runtime")), *_oom(evidence), *_zero(evidence)]
