"""Infrastructure: a node that is not Ready, and the control plane's own pods (kube-proxy, kube-scheduler, CoreDNS)
not running, shown by their objects.

- A Node whose ``Ready`` condition is not True (Unknown: "Kubelet stopped posting node status."; False:
  "container runtime is down", "PLEG is not healthy") with the listed pods it runs.
- A kube-system pod the rules file's ``infrastructure`` rules name (by its name) that is not Running and ready;
  or, with kube-system's pods listed whole, no kube-scheduler pod at all while pods stay Pending with no
  scheduling event (the scheduler reports every pod it tries, placed or not).
"""

from __future__ import annotations

from diagnosis_server.agents.heuristic.analyzers.evidence import Evidence, Obj, runs_ready
from diagnosis_server.agents.heuristic.analyzers.joined import joined, said_binding
from diagnosis_server.agents.heuristic.analyzers.rules import ClusterRule, current_rules
from diagnosis_server.agents.heuristic.findings import Finding
from diagnosis_server.agents.heuristic.observations import Binding
from diagnosis_server.agents.heuristic.shapes import (
    is_condition_status,
    is_container_name,
    is_object_name,
    is_pod_phase,
    is_reason,
)
from diagnosis_server.agents.heuristic.workloads import workload_of_pod

CONTROL_PLANE = "kube-system"
NO_SCHEDULER = "schedules no pod: the scheduler of the cluster is not running"


def _nodes(evidence: Evidence) -> list[Finding]:
    out: list[Finding] = []
    for node in evidence.objects("Node"):
        conditions = node.get("status", "conditions")
        for c, cond in enumerate(conditions if isinstance(conditions, list) else []):
            if not isinstance(cond, dict) or cond.get("type") != "Ready" or cond.get("status") == "True":
                continue
            if not is_condition_status(cond.get("status")):
                continue  # (a status the API does not have is never written)
            bindings: list[Binding] = [
                node.bind_name(),
                node.bind("status", "conditions", c, "type"),
                node.bind("status", "conditions", c, "status"),
            ]
            facts = f"node {node.name} has condition Ready {cond.get('status')}"
            if is_reason(cond.get("reason")):
                facts += f" with reason {cond.get('reason')}"
                bindings.append(node.bind("status", "conditions", c, "reason"))
            on = [
                p
                for p in evidence.objects("Pod")
                if p.text("spec", "nodeName") == node.name and p.namespace != CONTROL_PLANE
            ]
            if on:
                facts += f"; pod {on[0].name} runs on it"
                bindings += [on[0].bind_name(), on[0].bind("spec", "nodeName")]
            said, said_bound = said_binding(
                node.bind("status", "conditions", c, "message"), str(cond.get("message") or "")
            )
            out.append(
                joined(
                    "node_not_ready",
                    node.name,
                    "is not ready",
                    facts,
                    [*bindings, *([said_bound] if said_bound else [])],
                    said=said,
                )
            )
    return out


def _state(pod: Obj) -> tuple[str, list[Binding]]:
    statuses = pod.get("status", "containerStatuses")
    for s in range(len(statuses) if isinstance(statuses, list) else 0):
        reason = pod.text("status", "containerStatuses", s, "state", "waiting", "reason")
        if is_reason(reason):
            return f"its container is waiting with reason {reason}", [
                pod.bind("status", "containerStatuses", s, "state", "waiting", "reason")
            ]
    # A phase or reason the API would not write is never written: the pod is said not ready.
    phase, reason = pod.text("status", "phase"), pod.text("status", "reason")
    if not is_pod_phase(phase):
        return "it is not ready", []
    bindings = [pod.bind("status", "phase")]
    if is_reason(reason):
        bindings.append(pod.bind("status", "reason"))
        return f"it is {phase} with reason {reason}", bindings
    return f"it is {phase}", bindings


def _unscheduled(evidence: Evidence) -> list[Obj]:
    """Pods with no node and no scheduling event at all (none placed them, none failed to)."""
    out: list[Obj] = []
    for pod in evidence.objects("Pod"):
        if pod.namespace == CONTROL_PLANE or pod.text("spec", "nodeName") or pod.text("status", "phase") != "Pending":
            continue
        events = evidence.events_about("Pod", pod.name, pod.namespace)
        if not any(e.text("reason") in ("FailedScheduling", "Scheduled") for e in events):
            out.append(pod)
    return out


def _control_plane(evidence: Evidence, rules: tuple[ClusterRule, ...]) -> list[Finding]:
    out: list[Finding] = []
    pods = evidence.objects("Pod", CONTROL_PLANE)
    pending = _unscheduled(evidence)
    for rule in rules:
        mine = [p for p in pods if rule.compiled.search(p.name)]
        down = [p for p in mine if not runs_ready(p)]
        if down:
            pod = down[0]
            service = workload_of_pod(pod.name) if not pod.name.startswith("kube-scheduler") else "kube-scheduler"
            state, bindings = _state(pod)
            facts = f"pod {pod.name} in namespace {CONTROL_PLANE} is not running: {state}"
            node = pod.text("spec", "nodeName")
            node = node if is_object_name(node) else ""
            served = [
                p
                for p in evidence.objects("Pod")
                if p.namespace != CONTROL_PLANE and node and p.text("spec", "nodeName") == node
            ]
            if rule.kind == "kube_proxy_down" and served:
                # The path to the workloads it fails: their pods on the node it runs on.
                facts += f"; it runs on node {node}, as pod {served[0].name} does"
                bindings += [pod.bind("spec", "nodeName"), served[0].bind_name(), served[0].bind("spec", "nodeName")]
            if rule.kind == "kube_scheduler_down" and pending:
                facts += f"; pod {pending[0].name} is Pending with no scheduling event"
                bindings += [pending[0].bind_name(), pending[0].bind("status", "phase")]
            name = pod.bind("metadata", "name", text=service) if service in pod.name else pod.bind_name()
            out.append(
                joined(
                    rule.kind,
                    service,
                    rule.phrase,
                    facts,
                    [name, pod.bind_name(), pod.bind("metadata", "namespace"), *bindings],
                )
            )
        elif rule.kind == "kube_proxy_down" and (absent := _node_without(mine, evidence)) is not None:
            out.append(absent)
        elif (
            not mine
            and rule.kind == "kube_scheduler_down"
            and pending
            and evidence.listed("Pod", CONTROL_PLANE)
            and pods
        ):
            # No scheduler pod holds its name: the scheduler is named as the pending pod names it
            # (spec.schedulerName, default-scheduler), the fault in words no output needs to hold.
            pod = pending[0]
            scheduler = pod.text("spec", "schedulerName")
            if not is_container_name(scheduler):
                continue
            facts = (
                f"no scheduler pod runs in namespace {CONTROL_PLANE} (its pods are listed); "
                f"pod {pod.name} is Pending with no scheduling event"
            )
            bindings = [
                pod.bind("spec", "schedulerName"),
                pods[0].bind("metadata", "namespace"),
                pod.bind_name(),
                pod.bind("status", "phase"),
            ]
            out.append(joined(rule.kind, scheduler, NO_SCHEDULER, facts, bindings, strength=4))
    return out


def _node_without(proxies: list[Obj], evidence: Evidence) -> Finding | None:
    """A node kube-proxy runs on none of, while it runs on the others (a DaemonSet's pod its selector left out):
    the Service traffic of the workloads on that node goes nowhere. Needs kube-system's pods and the nodes listed
    whole, and a workload's pod on that node."""
    if not proxies or not evidence.listed("Pod", CONTROL_PLANE) or not evidence.listed("Node"):
        return None
    covered = {p.text("spec", "nodeName") for p in proxies}
    for node in evidence.objects("Node"):
        if node.name in covered or not is_object_name(node.name) or not _ready(node):
            continue
        served = [
            p
            for p in evidence.objects("Pod")
            if p.namespace != CONTROL_PLANE and p.text("spec", "nodeName") == node.name
        ]
        if not served:
            continue
        proxy = next((p for p in proxies if is_object_name(p.text("spec", "nodeName"))), None)
        if proxy is None:
            return None
        facts = (
            f"no kube-proxy pod runs on node {node.name} (the pods of namespace {CONTROL_PLANE} are listed), "
            f"where pod {served[0].name} runs; pod {proxy.name} runs on node {proxy.text('spec', 'nodeName')}"
        )
        bindings = [
            node.bind_name(),
            served[0].bind_name(),
            served[0].bind("spec", "nodeName"),
            proxy.bind("metadata", "name", text="kube-proxy"),
            proxy.bind_name(),
            proxy.bind("metadata", "namespace"),
            proxy.bind("spec", "nodeName"),
        ]
        return joined("kube_proxy_down", "kube-proxy", NO_PROXY, facts, bindings)
    return None


NO_PROXY = "routes no Service traffic on a node: kube-proxy does not run there"


def _ready(node: Obj) -> bool:
    conditions = node.get("status", "conditions")
    return any(
        isinstance(c, dict) and c.get("type") == "Ready" and c.get("status") == "True"
        for c in (conditions if isinstance(conditions, list) else [])
    )


def analyze(evidence: Evidence) -> list[Finding]:
    return [*_nodes(evidence), *_control_plane(evidence, current_rules().of_family("infrastructure"))]
