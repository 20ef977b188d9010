"""Scheduling: a pod the scheduler cannot place, joined to the node, claim or request that keeps it Pending.

The scheduler's text is the pod's ``PodScheduled=False`` condition message or its latest FailedScheduling event
("0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 2 node(s) didn't match Pod's node
affinity/selector. preemption: ..."); each clause the rules file's ``scheduling`` rules read names the object that
shows it: a node's taint, a node marked unschedulable, a nodeSelector no node's labels hold, a request larger than
any node's allocatable, a PersistentVolumeClaim that is Pending (and the StorageClass it names, when none of that
name exists). A pod that now runs on a node after a FailedScheduling is context with the event's time, never a
cause.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from diagnosis_server.agents.heuristic.analyzers.evidence import Evidence, Obj, event_time, event_time_path, workload_of
from diagnosis_server.agents.heuristic.analyzers.joined import joined, said_binding
from diagnosis_server.agents.heuristic.analyzers.rules import ClusterRule, current_rules
from diagnosis_server.agents.heuristic.findings import Finding, Role
from diagnosis_server.agents.heuristic.observations import Binding, walk
from diagnosis_server.agents.heuristic.workloads import is_container_name


def _scheduler_text(pod: Obj, evidence: Evidence) -> tuple[str, Binding] | None:
    conditions = pod.get("status", "conditions")
    for c, cond in enumerate(conditions if isinstance(conditions, list) else []):
        if isinstance(cond, dict) and cond.get("type") == "PodScheduled" and cond.get("status") == "False":
            message = cond.get("message")
            if isinstance(message, str) and message:
                return message, pod.bind("status", "conditions", c, "message")
    events = [
        e for e in evidence.events_about("Pod", pod.name, pod.namespace) if e.text("reason") == "FailedScheduling"
    ]
    if events:
        latest = max(events, key=lambda e: event_time(e) or _EPOCH)
        return latest.text("message"), latest.bind("message")
    return None


def _nodes_with(evidence: Evidence, test: object) -> list[tuple[Obj, int]]:
    out: list[tuple[Obj, int]] = []
    for node in evidence.objects("Node"):
        taints = node.get("spec", "taints")
        for t, taint in enumerate(taints if isinstance(taints, list) else []):
            if isinstance(taint, dict) and callable(test) and test(taint):
                out.append((node, t))
    return out


def _taint(pod: Obj, match: re.Match[str], evidence: Evidence) -> tuple[str, list[Binding]]:
    key = match.group("key").strip()
    nodes = _nodes_with(evidence, lambda taint: taint.get("key") == key)
    if not nodes:
        return "", []
    node, t = nodes[0]
    effect = node.text("spec", "taints", t, "effect")
    facts = f"node {node.name} has taint {key} with effect {effect}; pod {pod.name} has no toleration for {key}"
    bindings = [node.bind_name(), node.bind("spec", "taints", t)]
    return facts, [*bindings, pod.bind_name()]


def _cordoned(pod: Obj, evidence: Evidence) -> tuple[str, list[Binding]]:
    nodes = [n for n in evidence.objects("Node") if n.get("spec", "unschedulable") is True]
    if not nodes:
        return "", []
    names = ", ".join(n.name for n in nodes[:3])
    bindings = [b for n in nodes[:3] for b in (n.bind_name(), n.bind("spec", "unschedulable"))]
    return f"node {names} is unschedulable", bindings


def _selector(pod: Obj, evidence: Evidence) -> tuple[str, list[Binding]]:
    selector = pod.get("spec", "nodeSelector")
    if isinstance(selector, dict) and selector:
        key, value = next(iter(selector.items()))
        nodes = evidence.objects("Node")
        if nodes and any(n.labels.get(str(key)) == value for n in nodes):
            return "", []
        facts = f"pod {pod.name} needs node label {key}={value}"
        if nodes and evidence.listed("Node"):
            facts += f"; no node has label {key}={value}"
        return facts, [pod.bind_name(), pod.bind("spec", "nodeSelector")]
    terms = pod.get("spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(terms, dict):
        key = pod.text(
            "spec",
            "affinity",
            "nodeAffinity",
            "requiredDuringSchedulingIgnoredDuringExecution",
            "nodeSelectorTerms",
            0,
            "matchExpressions",
            0,
            "key",
        )
        if key:
            path = ("nodeSelectorTerms", 0, "matchExpressions", 0, "key")
            bound = pod.bind(
                "spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", *path
            )
            return f"pod {pod.name} needs node affinity on label {key}", [pod.bind_name(), bound]
    return "", []


def _request(pod: Obj, resource: str, evidence: Evidence) -> tuple[str, list[Binding]]:
    containers = pod.get("spec", "containers")
    for c, container in enumerate(containers if isinstance(containers, list) else []):
        requests = walk(container, ("resources", "requests"))
        if isinstance(requests, dict) and resource in requests:
            name = pod.text("spec", "containers", c, "name")
            if not is_container_name(name):
                continue  # never a name in a sentence
            facts = f"pod {pod.name} requests {resource} {requests[resource]} for container {name}"
            bindings = [pod.bind_name(), pod.bind("spec", "containers", c, "resources", "requests")]
            nodes = [n for n in evidence.objects("Node") if n.text("status", "allocatable", resource)]
            if nodes:
                node = nodes[0]
                facts += f"; node {node.name} has {resource} {node.text('status', 'allocatable', resource)}"
                bindings += [node.bind_name(), node.bind("status", "allocatable")]
            return facts, bindings
    return "", []


def _claim(pod: Obj, evidence: Evidence) -> tuple[str, list[Binding]]:
    volumes = pod.get("spec", "volumes")
    for v, volume in enumerate(volumes if isinstance(volumes, list) else []):
        claim = volume.get("persistentVolumeClaim") if isinstance(volume, dict) else None
        name = claim.get("claimName") if isinstance(claim, dict) else None
        if not isinstance(name, str):
            continue
        pvc = evidence.named("PersistentVolumeClaim", name, pod.namespace)
        if pvc is None or pvc.text("status", "phase") == "Bound":
            continue
        bindings = [pod.bind("spec", "volumes", v, "persistentVolumeClaim", "claimName"), pvc.bind_name()]
        facts = f"claim {name} is {pvc.text('status', 'phase') or 'not bound'}"
        if pvc.text("status", "phase"):
            bindings.append(pvc.bind("status", "phase"))
        wanted = pvc.text("spec", "storageClassName")
        if wanted and evidence.listed("StorageClass") and evidence.named("StorageClass", wanted) is None:
            facts += f"; its storageclass {wanted} does not exist"
            bindings.append(pvc.bind("spec", "storageClassName"))
        return facts, bindings
    return "", []


def _facts(rule: ClusterRule, match: re.Match[str], pod: Obj, evidence: Evidence) -> tuple[str, list[Binding]]:
    if rule.kind == "untolerated_taint":
        return _taint(pod, match, evidence)
    if rule.kind == "node_unschedulable":
        return _cordoned(pod, evidence)
    if rule.kind == "node_selector_mismatch":
        return _selector(pod, evidence)
    if rule.kind == "insufficient_resources":
        return _request(pod, match.group("resource"), evidence)
    if rule.kind in ("unbound_claim", "no_volume"):
        return _claim(pod, evidence)
    return "", []


def _pending(pod: Obj, evidence: Evidence, rules: tuple[ClusterRule, ...]) -> Finding | None:
    found = _scheduler_text(pod, evidence)
    if found is None:
        return None
    message, bound = found
    service, service_binding = workload_of(pod)
    said, said_bound = said_binding(bound, message)
    fallback: Finding | None = None
    for rule in rules:
        match = rule.compiled.search(message)
        if match is None:
            continue
        facts, bindings = _facts(rule, match, pod, evidence)
        if not facts:
            fallback = fallback or joined(
                rule.kind,
                service,
                rule.phrase,
                f"pod {pod.name} is Pending",
                [service_binding, pod.bind_name(), *([said_bound] if said_bound else [])],
                said=said,
                strength=3,
                pod=pod.name,
            )
            continue
        return joined(
            rule.kind,
            service,
            rule.phrase,
            facts,
            [service_binding, *bindings, *([said_bound] if said_bound else [])],
            said=said,
            pod=pod.name,
        )
    return fallback


def _ended(pod: Obj, evidence: Evidence) -> Finding | None:
    events = [
        e for e in evidence.events_about("Pod", pod.name, pod.namespace) if e.text("reason") == "FailedScheduling"
    ]
    if not events:
        return None
    latest = max(events, key=lambda e: event_time(e) or _EPOCH)
    path = event_time_path(latest)
    service, service_binding = workload_of(pod)
    when = latest.text(*path) if path else ""
    bindings = [service_binding, pod.bind_name(), pod.bind("spec", "nodeName"), latest.bind("reason")]
    facts = f"pod {pod.name} runs on node {pod.text('spec', 'nodeName')}"
    if when:
        facts += f" since FailedScheduling last reported at {when}"
        bindings.append(latest.bind(*path))
    return joined(
        "ended_scheduling", service, "was scheduled after it could not be", facts, bindings, role=Role.SUPPORT
    )


_EPOCH = datetime.min.replace(tzinfo=UTC)


def analyze(evidence: Evidence) -> list[Finding]:
    rules = current_rules().of_family("scheduling")
    out: list[Finding] = []
    for pod in evidence.objects("Pod"):
        if pod.text("spec", "nodeName"):
            ended = _ended(pod, evidence)
            if ended is not None:
                out.append(ended)
            continue
        if pod.text("status", "phase") not in ("", "Pending"):
            continue
        finding = _pending(pod, evidence, rules)
        if finding is not None:
            out.append(finding)
    return out
