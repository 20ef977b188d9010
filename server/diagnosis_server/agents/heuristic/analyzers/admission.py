"""Admission: a controller that cannot create its pods (FailedCreate), joined to the quota or service account
that refuses them, and only while its pods are still missing.

The ReplicaSet controller's text: 'Error creating: pods "checkout-7d9c8b-x2x4f" is forbidden: exceeded quota:
compute, requested: requests.cpu=500m, used: requests.cpu=2, limited: requests.cpu=2' or 'Error creating: pods
"checkout-7d9c8b-" is forbidden: error looking up service account shop/checkout: serviceaccount "checkout" not
found'. The quota's ``status.hard`` and ``status.used`` of the requested resource, or the namespace's service
accounts listed whole without that name, are the objects that show it. A controller whose pods are now ready (its
``status.readyReplicas`` at its ``spec.replicas``) is past it: the FailedCreate is context with its time.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from diagnosis_server.agents.heuristic.analyzers.evidence import (
    Evidence,
    Obj,
    event_time,
    event_time_path,
    ready_count,
    runs_ready,
    workload_of,
)
from diagnosis_server.agents.heuristic.analyzers.joined import joined, said_binding
from diagnosis_server.agents.heuristic.analyzers.rules import ClusterRule, current_rules
from diagnosis_server.agents.heuristic.findings import Finding, Role
from diagnosis_server.agents.heuristic.observations import Binding, parse_ts
from diagnosis_server.agents.heuristic.shapes import is_label_key, is_object_name, is_quantity
from diagnosis_server.agents.heuristic.workloads import workload_of_replicaset

_MIN = datetime.min.replace(tzinfo=UTC)
CONTROLLERS = ("ReplicaSet", "StatefulSet", "DaemonSet", "Job")
_REQUESTED = re.compile(r"requested: (?P<resource>[A-Za-z0-9./-]+)=")


def _quota(match: re.Match[str], message: str, namespace: str, evidence: Evidence) -> tuple[str, list[Binding]]:
    name = match.group("name")
    quota = evidence.named("ResourceQuota", name, namespace)
    requested = _REQUESTED.search(message)
    if quota is None or requested is None:
        return "", []
    resource = requested.group("resource")
    hard, used = quota.text("status", "hard", resource), quota.text("status", "used", resource)
    # A hard limit or a use that is not a quantity is never written (nor the resource, if not a resource's name).
    if not is_quantity(hard) or not is_label_key(resource):
        return "", []
    facts = f"quota {name} allows {resource} {hard}"
    bindings = [quota.bind_name(), quota.bind("status", "hard")]
    if is_quantity(used):
        facts += f" and {used} is used"
        bindings.append(quota.bind("status", "used"))
    return facts, bindings


def _account(match: re.Match[str], namespace: str, evidence: Evidence) -> tuple[str, list[Binding]]:
    name = match.group("name")
    if not is_object_name(name) or not evidence.listed("ServiceAccount", namespace):
        return "", []  # (a "name" that is not one is never written)
    if evidence.named("ServiceAccount", name, namespace):
        return "", []
    return f"service account {name} does not exist in namespace {namespace}", []


def _controller(event: Obj, evidence: Evidence) -> Obj | None:
    kind, name = event.text("involvedObject", "kind"), event.text("involvedObject", "name")
    return evidence.named(kind, name, event.namespace)


def _service(event: Obj, controller: Obj | None) -> tuple[str, Binding]:
    if controller is not None:
        return workload_of(controller)
    name = event.text("involvedObject", "name")
    kind = event.text("involvedObject", "kind")
    workload = workload_of_replicaset(name) if kind == "ReplicaSet" else name
    return workload, event.bind("involvedObject", "name", text=workload)


def _replicas(controller: Obj) -> tuple[str, list[Binding]]:
    ready, desired = ready_count(controller)
    daemon = controller.kind == "DaemonSet"
    ready_path = ("status", "numberReady") if daemon else ("status", "readyReplicas")
    desired_path = ("status", "desiredNumberScheduled") if daemon else ("spec", "replicas")
    bindings = [controller.bind_name()]
    bindings += [controller.bind(*path) for path in (desired_path, ready_path) if controller.get(*path) is not None]
    kind = controller.kind.lower()
    if controller.get(*ready_path) is None:
        return f"{kind} {controller.name} has no ready pod of {desired} wanted", bindings
    return f"{kind} {controller.name} has {ready} of {desired} pods ready", bindings


def _current(event: Obj, controller: Obj | None, rules: tuple[ClusterRule, ...], evidence: Evidence) -> Finding:
    message = event.text("message")
    service, service_binding = _service(event, controller)
    said, said_bound = said_binding(event.bind("message"), message)
    base = [service_binding, event.bind("reason"), *([said_bound] if said_bound else [])]
    replicas, replica_bindings = _replicas(controller) if controller is not None else ("", [])
    for rule in rules:
        match = rule.compiled.search(message)
        if match is None:
            continue
        if rule.kind == "quota_exceeded":
            facts, bindings = _quota(match, message, event.namespace, evidence)
        elif rule.kind == "service_account_missing":
            facts, bindings = _account(match, event.namespace, evidence)
        else:
            facts, bindings = "", []
        shown = "; ".join(part for part in (replicas, facts) if part) or f"{event.text('reason')} reported"
        strength = 5 if facts or replicas else 4
        return joined(
            rule.kind,
            service,
            rule.phrase,
            shown,
            [*base, *replica_bindings, *bindings],
            said=said,
            strength=strength,
            onset=event_time(event),
        )
    facts = replicas or "FailedCreate reported"
    return joined(
        "failed_create",
        service,
        "cannot create its pods",
        facts,
        [*base, *replica_bindings],
        said=said,
        strength=4,
        onset=event_time(event),
    )


def _ended(event: Obj, controller: Obj) -> Finding:
    service, service_binding = workload_of(controller)
    replicas, bindings = _replicas(controller)
    path = event_time_path(event)
    facts = replicas
    if path:
        facts += f" since FailedCreate last reported at {event.text(*path)}"
        bindings.append(event.bind(*path))
    return joined(
        "ended_failed_create",
        service,
        "created its pods after a failed create",
        facts,
        [service_binding, *bindings, event.bind("reason")],
        role=Role.SUPPORT,
    )


def _owned_ready(event: Obj, evidence: Evidence) -> list[tuple[Obj, int]]:
    """The pods the event's controller owns (their ``ownerReferences``), with the reference's index, when every
    one runs with all its containers ready and was created after the FailedCreate last reported: what the
    controller has now when the controller itself was not read."""
    kind, name = event.text("involvedObject", "kind"), event.text("involvedObject", "name")
    last = event_time(event)
    owned: list[tuple[Obj, int]] = []
    for pod in evidence.objects("Pod", event.namespace):
        refs = pod.get("metadata", "ownerReferences")
        for r, ref in enumerate(refs if isinstance(refs, list) else []):
            if isinstance(ref, dict) and ref.get("kind") == kind and ref.get("name") == name:
                owned.append((pod, r))
    for pod, _ in owned:
        created = parse_ts(pod.get("metadata", "creationTimestamp"))
        if not runs_ready(pod) or last is None or created is None or created < last:
            return []
    return owned


def _ended_by_pods(event: Obj, owned: list[tuple[Obj, int]]) -> Finding | None:
    pod, r = owned[0]
    if not is_object_name(event.text("involvedObject", "name")):
        return None  # (a "name" that is not one is never written)
    service, service_binding = workload_of(pod)
    path = event_time_path(event)
    facts = f"pod {pod.name} of {event.text('involvedObject', 'kind').lower()} {event.text('involvedObject', 'name')}"
    facts += " runs with every container ready"
    bindings = [
        service_binding,
        pod.bind_name(),
        pod.bind("metadata", "ownerReferences", r, "name"),
        pod.bind("status", "phase"),
        event.bind("reason"),
    ]
    if path:
        facts += f", created after FailedCreate last reported at {event.text(*path)}"
        bindings.append(event.bind(*path))
    return joined(
        "ended_failed_create",
        service,
        "created its pods after a failed create",
        facts,
        bindings,
        role=Role.SUPPORT,
    )


def analyze(evidence: Evidence) -> list[Finding]:
    rules = current_rules().of_family("admission")
    latest: dict[tuple[str, str, str], Obj] = {}
    for event in evidence.objects("Event"):
        if event.text("reason") != "FailedCreate" or event.text("involvedObject", "kind") not in CONTROLLERS:
            continue
        key = (event.namespace, event.text("involvedObject", "kind"), event.text("involvedObject", "name"))
        known = latest.get(key)
        if known is None or (event_time(event) or _MIN) > (event_time(known) or _MIN):
            latest[key] = event
    out: list[Finding] = []
    for event in latest.values():
        controller = _controller(event, evidence)
        if controller is not None:
            ready, desired = ready_count(controller)
            if (desired > 0 and ready >= desired) or controller.get("spec", "replicas") == 0:
                out.append(_ended(event, controller))
                continue
        else:
            owned = _owned_ready(event, evidence)
            ended = _ended_by_pods(event, owned) if owned else None
            if ended is not None:
                out.append(ended)
                continue
        out.append(_current(event, controller, rules, evidence))
    return out
