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

from diagnosis_server.agents.heuristic.analyzers.evidence import (
    Evidence,
    Obj,
    event_time,
    event_time_path,
    runs_ready,
    workload_of,
)
from diagnosis_server.agents.heuristic.analyzers.joined import JOINED, joined, said_binding
from diagnosis_server.agents.heuristic.analyzers.rules import ClusterRule, current_rules
from diagnosis_server.agents.heuristic.findings import Finding, Role
from diagnosis_server.agents.heuristic.observations import Binding, walk
from diagnosis_server.agents.heuristic.shapes import (
    is_claim_phase,
    is_container_name,
    is_label_key,
    is_label_value,
    is_object_name,
    is_quantity,
    is_taint_effect,
)
from diagnosis_server.agents.heuristic.workloads import workload_of_pod


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
    if not nodes or not is_label_key(key):
        return "", []
    node, t = nodes[0]
    effect = node.text("spec", "taints", t, "effect")
    shown = f" with effect {effect}" if is_taint_effect(effect) else ""
    facts = f"node {node.name} has taint {key}{shown}; pod {pod.name} has no toleration for {key}"
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
        # A key or value without its shape is never written: the selector is bound, the label not named.
        label = f"node label {key}={value}" if is_label_key(key) and is_label_value(value, empty=True) else ""
        facts = f"pod {pod.name} needs {label or 'a node label'}"
        if nodes and evidence.listed("Node"):
            facts += f"; no node has {label or 'that label'}"
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
        if is_label_key(key):
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
            if not is_container_name(name) or not is_label_key(resource):
                continue  # never a name in a sentence
            # A request that is not a quantity is bound, never written.
            amount = f" {requests[resource]}" if is_quantity(requests[resource]) else ""
            facts = f"pod {pod.name} requests {resource}{amount} for container {name}"
            bindings = [
                pod.bind_name(),
                pod.bind("spec", "containers", c, "name"),
                pod.bind("spec", "containers", c, "resources", "requests"),
            ]
            # A node pods may run on (no taint) says what a node gives, before a tainted control plane.
            nodes = [n for n in evidence.objects("Node") if is_quantity(n.get("status", "allocatable", resource))]
            nodes.sort(key=lambda n: bool(n.get("spec", "taints")))
            if nodes:
                node = nodes[0]
                facts += f"; node {node.name} has {resource} {node.text('status', 'allocatable', resource)}"
                bindings += [node.bind_name(), node.bind("status", "allocatable")]
            return facts, bindings
    return "", []


def _volume_facts(pvc: Obj, evidence: Evidence) -> tuple[str, list[Binding]]:
    """Why a Pending claim binds no volume, from the volumes and classes: the volume it names held by another
    claim or absent; a class it names that does not exist; no class and no volume Available to bind."""
    wanted = pvc.text("spec", "storageClassName")
    volume = pvc.text("spec", "volumeName")
    if volume:
        if not is_object_name(volume):
            return "", []
        pv = evidence.named("PersistentVolume", volume)
        if pv is not None:
            ref_name, ref_ns = pv.text("spec", "claimRef", "name"), pv.text("spec", "claimRef", "namespace")
            if is_object_name(ref_name) and (ref_name, ref_ns or pvc.namespace) != (pvc.name, pvc.namespace):
                return (
                    # (Not "bound": the scheduler's text says the claim is unbound, a word the check reads.)
                    f"it asks for volume {volume}, which another claim holds: {ref_name}",
                    [pvc.bind("spec", "volumeName"), pv.bind_name(), pv.bind("spec", "claimRef", "name")],
                )
        elif evidence.listed("PersistentVolume"):
            return f"it asks for volume {volume}, which does not exist", [pvc.bind("spec", "volumeName")]
        return "", []
    if is_object_name(wanted) and evidence.listed("StorageClass") and evidence.named("StorageClass", wanted) is None:
        return f"its storageclass {wanted} does not exist", [pvc.bind("spec", "storageClassName")]
    if not wanted and evidence.listed("PersistentVolume"):
        free = [
            pv
            for pv in evidence.objects("PersistentVolume")
            if pv.text("status", "phase") == "Available" and not pv.text("spec", "storageClassName")
        ]
        if not free:
            # An empty class name is no text to bind: the claim's name and phase show it.
            return "it names no storage class and no persistent volume is available to bind it", []
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
        phase = pvc.text("status", "phase")
        # A phase the API does not have is bound, never written: the claim is not Bound, as its phase shows.
        facts = f"claim {name} is {phase if is_claim_phase(phase) else 'not bound'}"
        if phase:
            bindings.append(pvc.bind("status", "phase"))
        why, shown = _volume_facts(pvc, evidence)
        if why:
            facts += f"; {why}"
            bindings += shown
        return facts, bindings
    return "", []


def _volume_affinity(pod: Obj, evidence: Evidence) -> tuple[str, list[Binding]]:
    """The node a bound volume of the pod is pinned to by its node affinity, and whether that node exists."""
    volumes = pod.get("spec", "volumes")
    for v, volume in enumerate(volumes if isinstance(volumes, list) else []):
        claim = volume.get("persistentVolumeClaim") if isinstance(volume, dict) else None
        name = claim.get("claimName") if isinstance(claim, dict) else None
        pvc = evidence.named("PersistentVolumeClaim", name, pod.namespace) if isinstance(name, str) else None
        volume_name = pvc.text("spec", "volumeName") if pvc is not None else ""
        pv = evidence.named("PersistentVolume", volume_name) if is_object_name(volume_name) else None
        if pvc is None or pv is None:
            continue
        terms = pv.get("spec", "nodeAffinity", "required", "nodeSelectorTerms")
        for t, term in enumerate(terms if isinstance(terms, list) else []):
            expressions = term.get("matchExpressions") if isinstance(term, dict) else None
            for e, expression in enumerate(expressions if isinstance(expressions, list) else []):
                if not isinstance(expression, dict) or expression.get("key") != "kubernetes.io/hostname":
                    continue
                values = expression.get("values")
                if not isinstance(values, list):
                    continue
                nodes = [n for n in values if isinstance(n, str) and is_object_name(n)]
                if not nodes:
                    continue
                path = ("spec", "nodeAffinity", "required", "nodeSelectorTerms", t, "matchExpressions", e, "values")
                facts = f"claim {pvc.name} is bound to volume {pv.name}, which its node affinity pins to {nodes[0]}"
                bindings = [
                    pod.bind("spec", "volumes", v, "persistentVolumeClaim", "claimName"),
                    pvc.bind("spec", "volumeName"),
                    pv.bind(*path, 0),
                ]
                if evidence.listed("Node") and all(evidence.named("Node", n) is None for n in nodes):
                    facts += f"; node {nodes[0]} is not in the cluster"
                return facts, bindings
    return "", []


# The clauses whose objects ``_facts`` reads (a node's taint, a claim, a request).
_JOINED_KINDS = frozenset(
    {
        "untolerated_taint", "node_unschedulable", "node_selector_mismatch", "insufficient_resources",
        "unbound_claim", "no_volume", "volume_node_affinity", "claim_missing",
    }
)  # fmt: skip


def _missing_claim(pod: Obj, name: str, evidence: Evidence) -> tuple[str, list[Binding]]:
    """The claim the pod names that its namespace's claims, listed whole, do not hold."""
    if not is_object_name(name) or not evidence.listed("PersistentVolumeClaim", pod.namespace):
        return "", []
    if evidence.named("PersistentVolumeClaim", name, pod.namespace) is not None:
        return "", []
    volumes = pod.get("spec", "volumes")
    for v, volume in enumerate(volumes if isinstance(volumes, list) else []):
        claim = volume.get("persistentVolumeClaim") if isinstance(volume, dict) else None
        if isinstance(claim, dict) and claim.get("claimName") == name:
            path = ("spec", "volumes", v, "persistentVolumeClaim", "claimName")
            return f"its volume names claim {name}, which namespace {pod.namespace} does not hold", [
                pod.bind(*path),
                pod.bind("metadata", "namespace"),
            ]
    return "", []


def _facts(rule: ClusterRule, match: re.Match[str], pod: Obj, evidence: Evidence) -> tuple[str, list[Binding]]:
    if rule.kind == "claim_missing":
        return _missing_claim(pod, match.group("name"), evidence)
    if rule.kind == "volume_node_affinity":
        return _volume_affinity(pod, evidence)
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


_TOTAL = re.compile(r"0/(?P<total>\d+) nodes are available")


def _clauses(message: str, rules: tuple[ClusterRule, ...]) -> list[tuple[int, ClusterRule, re.Match[str]]]:
    """The scheduler's clauses the rules read, those that turn away the most nodes first (in the rules' order
    when as many). A clause of one node beside one of every other ("1 node(s) had untolerated taint
    {node-role.kubernetes.io/control-plane: }, 3 Insufficient memory": the control plane's standing taint) is
    not what keeps the pod off the nodes it could run on. A clause with no count is about the pod (its claims):
    every node."""
    total = _TOTAL.search(message)
    every = int(total.group("total")) if total else 0
    found: list[tuple[int, int, ClusterRule, re.Match[str]]] = []
    for order, rule in enumerate(rules):
        for match in rule.compiled.finditer(message):
            count = match.groupdict().get("count")
            found.append((-(int(count) if count and count.isdigit() else every), order, rule, match))
    found.sort(key=lambda f: (f[0], f[1]))
    return [(-nodes, rule, match) for nodes, _, rule, match in found]


def _standing(pod: Obj, rule: ClusterRule, match: re.Match[str]) -> bool:
    """A clause that holds of every healthy pod of its kind: a DaemonSet's pod matches only its own node's
    affinity, and no pod tolerates the control plane's taint unless it is meant to run there."""
    if rule.kind == "node_selector_mismatch":
        owners = pod.get("metadata", "ownerReferences")
        return isinstance(owners, list) and any(isinstance(o, dict) and o.get("kind") == "DaemonSet" for o in owners)
    if rule.kind == "untolerated_taint":
        return (match.groupdict().get("key") or "") in _CONTROL_PLANE_TAINTS
    return False


_CONTROL_PLANE_TAINTS = frozenset({"node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master"})


def _pending(pod: Obj, evidence: Evidence, rules: tuple[ClusterRule, ...]) -> Finding | None:
    found = _scheduler_text(pod, evidence)
    if found is None:
        return None
    message, bound = found
    service, service_binding = workload_of(pod)
    said, said_bound = said_binding(bound, message)
    fallback: Finding | None = None
    most = 0
    clauses = _clauses(message, rules)
    moving = [c for c in clauses if not _standing(pod, c[1], c[2])]
    for nodes, rule, match in moving or clauses:
        if fallback is not None and nodes < most:
            return fallback  # a clause of fewer nodes is not what keeps the pod off the most
        most = max(most, nodes)
        facts, bindings = _facts(rule, match, pod, evidence)
        if not facts:
            # The clause of the most nodes, with nothing more to join: its own words are the fault.
            clause, clause_bound = said_binding(bound, match.group(0))
            fallback = fallback or joined(
                rule.kind,
                service,
                rule.phrase,
                f"pod {pod.name} is Pending",
                [service_binding, pod.bind_name(), *([clause_bound] if clause_bound else [])],
                said=clause,
                # (a clause whose objects were not read is weaker than a finding that read them, e.g. the binder's)
                strength=3 if rule.kind in _JOINED_KINDS else JOINED,
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
    node = pod.text("spec", "nodeName")
    facts = f"pod {pod.name} runs on {f'node {node}' if is_object_name(node) else 'a node'}"
    if when:
        facts += f" since FailedScheduling last reported at {when}"
        bindings.append(latest.bind(*path))
    return joined(
        "ended_scheduling", service, "was scheduled after it could not be", facts, bindings, role=Role.SUPPORT
    )


_EPOCH = datetime.min.replace(tzinfo=UTC)


def _vanished(evidence: Evidence) -> list[Finding]:
    """FailedScheduling of pods that no longer exist (the namespace's pods listed whole), whose workload runs
    ready now with no pod of it Pending: a pod deleted and replaced; what the scheduler said of it has ended."""
    latest: dict[tuple[str, str], Obj] = {}
    for event in evidence.objects("Event"):
        if event.text("reason") != "FailedScheduling" or event.text("involvedObject", "kind") != "Pod":
            continue
        key = (event.namespace, event.text("involvedObject", "name"))
        known = latest.get(key)
        if known is None or (event_time(event) or _EPOCH) > (event_time(known) or _EPOCH):
            latest[key] = event
    out: list[Finding] = []
    for (namespace, name), event in latest.items():
        if not is_object_name(name) or not evidence.listed("Pod", namespace):
            continue  # (a "name" that is not one is never written)
        if evidence.named("Pod", name, namespace) is not None:
            continue
        workload = workload_of_pod(name)
        mine = [p for p in evidence.objects("Pod", namespace) if workload_of(p)[0] == workload]
        if not mine or any(p.text("status", "phase") == "Pending" for p in mine) or not any(map(runs_ready, mine)):
            continue
        pod = next(p for p in mine if runs_ready(p))
        service, service_binding = workload_of(pod)
        path = event_time_path(event)
        facts = f"pod {name}, which could not be scheduled, no longer exists; pod {pod.name} runs with every "
        facts += "container ready"
        bindings = [
            service_binding,
            event.bind("involvedObject", "name"),
            event.bind("reason"),
            pod.bind_name(),
            pod.bind("status", "phase"),
        ]
        if path:
            facts += f" (FailedScheduling last reported at {event.text(*path)})"
            bindings.append(event.bind(*path))
        out.append(
            joined(
                "ended_scheduling", service, "was scheduled after it could not be", facts, bindings, role=Role.SUPPORT
            )
        )
    return out


NO_NODE = "cannot run: its pods are assigned to a node that does not exist"


def _on_no_node(pod: Obj, evidence: Evidence) -> Finding | None:
    """A pod bound (``spec.nodeName``, set in its template or by hand) to a node the whole node list lacks: no
    scheduler places it and no kubelet runs it."""
    node = pod.text("spec", "nodeName")
    if not is_object_name(node) or not evidence.listed("Node") or not evidence.objects("Node"):
        return None  # (a node "name" that is not one is never written)
    if evidence.named("Node", node) is not None:
        return None
    if pod.text("status", "phase") not in ("", "Pending"):
        return None
    service, service_binding = workload_of(pod)
    nodes = evidence.objects("Node")
    facts = (
        f"pod {pod.name} is assigned to node {node} and is {pod.text('status', 'phase') or 'not running'}; "
        f"no node of that name exists (the nodes are {', '.join(n.name for n in nodes[:4])})"
    )
    bindings = [service_binding, pod.bind_name(), pod.bind("spec", "nodeName"), *(n.bind_name() for n in nodes[:4])]
    if pod.text("status", "phase"):
        bindings.append(pod.bind("status", "phase"))
    return joined("node_missing", service, NO_NODE, facts, bindings, pod=pod.name)


def analyze(evidence: Evidence) -> list[Finding]:
    rules = current_rules().of_family("scheduling")
    out: list[Finding] = []
    for pod in evidence.objects("Pod"):
        if pod.text("spec", "nodeName"):
            missing = _on_no_node(pod, evidence)
            if missing is not None:
                out.append(missing)
                continue
            ended = _ended(pod, evidence)
            if ended is not None:
                out.append(ended)
            continue
        if pod.text("status", "phase") not in ("", "Pending"):
            continue
        finding = _pending(pod, evidence, rules)
        if finding is not None:
            out.append(finding)
    return [*out, *_vanished(evidence)]
