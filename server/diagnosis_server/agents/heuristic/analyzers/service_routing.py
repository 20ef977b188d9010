"""Service routing: a Service whose selector matches no pod, whose targetPort is no port of its pods' containers,
or whose Endpoints hold no ready address.

Stated only from the objects that show it: the Service (its selector, its ports), the namespace's pods as listed
whole (their labels, their containers' ports) and the Endpoints of the same name. A selector that matches no pod
names the labels the pods that look meant for it do have ("pods have app=cartservice"): the pods whose label
under the same key reads the same without separators, else the namespace's pods with that key.
"""

from __future__ import annotations

from diagnosis_server.agents.heuristic.analyzers.evidence import Evidence, Obj
from diagnosis_server.agents.heuristic.analyzers.joined import joined
from diagnosis_server.agents.heuristic.findings import Finding, Role
from diagnosis_server.agents.heuristic.observations import Binding, walk
from diagnosis_server.agents.heuristic.shapes import (
    is_host_name,
    is_label_key,
    is_label_value,
    is_object_name,
    is_port,
)

MAX_SHOWN = 2


def _squashed(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def service_selector(service: Obj) -> dict[str, str]:
    """A Service's selector, as strings."""
    found = service.get("spec", "selector")
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


def matches(pod: Obj, selector: dict[str, str]) -> bool:
    """Whether a pod's labels hold every key=value of ``selector``."""
    labels = pod.labels
    return all(labels.get(k) == v for k, v in selector.items())


def _near_misses(service: Obj, selector: dict[str, str], pods: list[Obj]) -> list[tuple[Obj, str]]:
    """(pod, key) of the pods whose label under a selector key reads like the wanted value, else any with it."""
    out: list[tuple[Obj, str]] = []
    for key, wanted in selector.items():
        alike = [p for p in pods if key in p.labels and _squashed(p.labels[key]) == _squashed(wanted)]
        alike = alike or [p for p in pods if key in p.labels and (_squashed(service.name) in _squashed(p.labels[key]))]
        out += [(p, key) for p in alike]
    return out[:MAX_SHOWN]


def _labelled(key: str, value: str) -> bool:
    return is_label_key(key) and is_label_value(value, empty=True)


def _selector_finding(service: Obj, selector: dict[str, str], pods: list[Obj]) -> Finding:
    bindings: list[Binding] = [service.bind_name(), *(service.bind("spec", "selector", k) for k in selector)]
    if all(_labelled(k, v) for k, v in selector.items()):
        wanted = ",".join(f"{k}={v}" for k, v in selector.items())
        facts = f"Service {service.name} has selector {wanted}; no pod in namespace {service.namespace} has that label"
    else:
        # A key or value without its shape is never written: the selector is bound, not spelled out.
        facts = f"Service {service.name} has a selector; no pod in namespace {service.namespace} has its labels"
    bindings.append(service.bind("metadata", "namespace"))
    misses = [(p, k) for p, k in _near_misses(service, selector, pods) if _labelled(k, p.labels[k])]
    if misses:
        shown = sorted({f"{key}={pod.labels[key]}" for pod, key in misses})
        facts += f" (pods have {', '.join(shown)})"
        for pod, key in misses:
            bindings += [pod.bind_name(), pod.bind("metadata", "labels", key)]
    return joined("selector_mismatch", service.name, "receives no traffic", facts, bindings)


def container_ports(pod: Obj) -> list[tuple[int, int, int, str]]:
    """(container index, port index, containerPort, port name) of the pod's containers."""
    out: list[tuple[int, int, int, str]] = []
    containers = pod.get("spec", "containers")
    for c, container in enumerate(containers if isinstance(containers, list) else []):
        ports = container.get("ports") if isinstance(container, dict) else None
        for p, port in enumerate(ports if isinstance(ports, list) else []):
            number = walk(port, ("containerPort",))
            if isinstance(number, int) and not isinstance(number, bool):
                out.append((c, p, number, str(walk(port, ("name",)) or "")))
    return out


def _port_findings(service: Obj, pods: list[Obj]) -> list[Finding]:
    ports = service.get("spec", "ports")
    pod = pods[0]
    declared = container_ports(pod)
    if not declared:
        return []
    out: list[Finding] = []
    for s, port in enumerate(ports if isinstance(ports, list) else []):
        if not isinstance(port, dict):
            continue
        target = port.get("targetPort", port.get("port"))
        if isinstance(target, int) and not isinstance(target, bool):
            if any(number == target for _, _, number, _ in declared):
                continue
        elif isinstance(target, str) and is_port(target):
            if any(name == target for _, _, _, name in declared):
                continue
        else:
            continue
        # (the ports the containers do declare, each bound: the mismatch is read off them, not said as an absence)
        shown = declared[:MAX_SHOWN]
        numbers = ", ".join(str(number) for _, _, number, _ in shown)
        plural = "s" if len(shown) > 1 else ""
        facts = (
            f"Service {service.name} sends to targetPort {target}, but the containers of pod {pod.name} declare "
            f"port{plural} {numbers}"
        )
        bindings = [
            service.bind_name(),
            service.bind("spec", "ports", s),
            pod.bind_name(),
            *(pod.bind("spec", "containers", c, "ports", p, "containerPort") for c, p, _, _ in shown),
        ]
        out.append(joined("target_port_mismatch", service.name, "receives no traffic", facts, bindings))
        break
    return out


def _no_endpoints(service: Obj, evidence: Evidence, pods: list[Obj]) -> list[Finding]:
    endpoints = evidence.named("Endpoints", service.name, service.namespace)
    if endpoints is None:
        return []
    subsets = endpoints.get("subsets")
    ready = [s for s in subsets if isinstance(s, dict) and s.get("addresses")] if isinstance(subsets, list) else []
    if ready:
        return []
    facts = f"Endpoints {endpoints.name} holds no ready address for Service {service.name}"
    bindings = [service.bind_name(), endpoints.bind_name()]
    return [joined("no_endpoints", service.name, "has no ready endpoints", facts, bindings, role=Role.SUPPORT)]


def _templated(service: Obj, selector: dict[str, str], evidence: Evidence) -> bool:
    for kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"):
        for workload in evidence.objects(kind, service.namespace):
            labels = workload.get("spec", "template", "metadata", "labels")
            if isinstance(labels, dict) and all(labels.get(k) == v for k, v in selector.items()):
                return True
    return False


def _ingress_backends(evidence: Evidence) -> list[Finding]:
    """An Ingress rule whose backend names a Service its namespace, with its Services listed whole, does not hold:
    the ingress controller has nowhere to send the host's requests."""
    out: list[Finding] = []
    for ingress in evidence.objects("Ingress"):
        if not evidence.listed("Service", ingress.namespace):
            continue
        rules = ingress.get("spec", "rules")
        for r, rule in enumerate(rules if isinstance(rules, list) else []):
            paths = walk(rule, ("http", "paths"))
            for i, path in enumerate(paths if isinstance(paths, list) else []):
                name = walk(path, ("backend", "service", "name"))
                if not is_object_name(name) or evidence.named("Service", str(name), ingress.namespace) is not None:
                    continue
                at = ("spec", "rules", r, "http", "paths", i, "backend", "service", "name")
                host = walk(rule, ("host",))
                facts = f"Ingress {ingress.name} sends requests to Service {name}"
                bindings = [ingress.bind_name(), ingress.bind(*at)]
                if is_host_name(host):
                    facts += f" for host {host}"
                    bindings.append(ingress.bind("spec", "rules", r, "host"))
                facts += f"; namespace {ingress.namespace} holds no Service {name} (its Services are listed)"
                bindings.append(ingress.bind("metadata", "namespace"))
                out.append(
                    joined(
                        "ingress_backend_missing", str(name), "does not exist: an Ingress routes to it", facts, bindings
                    )
                )
    return out


def analyze(evidence: Evidence) -> list[Finding]:
    out: list[Finding] = _ingress_backends(evidence)
    for service in evidence.objects("Service"):
        selector = service_selector(service)
        if not selector or not evidence.listed("Pod", service.namespace):
            continue
        pods = [p for p in evidence.objects("Pod", service.namespace) if p.text("status", "phase") != "Succeeded"]
        selected = [p for p in pods if matches(p, selector)]
        if not selected:
            # A workload whose pod template the selector matches has no pods for another reason (zero replicas,
            # pods it cannot create): its own analyzers say why.
            if not _templated(service, selector, evidence):
                out.append(_selector_finding(service, selector, pods))
            continue
        found = _port_findings(service, selected)
        out += found or _no_endpoints(service, evidence, selected)
    return out
