"""Node analyzers: what the kubelet and the node controller report about a Node (``kubernetes.events`` or
``k8s.events`` whose involved object is a Node: NodeHasDiskPressure, EvictionThresholdMet, FreeDiskSpaceFailed,
NodeNotReady, SystemOOM, ...), judged by the rules file's ``event`` rules and said of the workloads whose pods
run on that node (a listed pod's ``spec.nodeName``).

- A workload with a failing pod (not settled: evicted, restarting, not ready) on the node: the node's event is a
  supporting finding of it (R-A-1), never its cause by itself: the pod's own state says what happened to it. The
  statement binds the pod's workload and name, its ``spec.nodeName``, the event's node, reason and message.
- A node short of disk (a ``disk_pressure`` rule's event) with a pod of another workload on it that mounts a
  directory of the node's own disk writable (a ``hostPath`` volume): a hypothesis that it fills that disk, never
  more. The kubelet ranks pods for eviction by their own ephemeral-storage use (the eviction message names the
  evicted pod's own container: "Container api was using 88Ki, ..."), which does not count a hostPath; the
  evidence shows the mount and the node's pressure, not what was written (R-V-4: nothing stated beyond it).

Node events live in the ``default`` namespace (client-go's recorder gives an object without a namespace that
one); the Executor reads them per node of a failing pod (``follow_ups.node_event_calls``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from diagnosis_server.agents.heuristic.analyzers.events import EventView, cleared, event_time, event_views, rule_for
from diagnosis_server.agents.heuristic.analyzers.pods import PodView, pod_views, settled
from diagnosis_server.agents.heuristic.analyzers.rules import EventRule, Rules, current_rules
from diagnosis_server.agents.heuristic.findings import Finding, Role, excerpt, one_line, quote
from diagnosis_server.agents.heuristic.observations import Binding, BindingError, Observation, parse_ts
from diagnosis_server.agents.heuristic.shapes import is_file_path

MAX_MESSAGE = 120
# Rule kinds whose node event says the node's disk is short: a hostPath writer on it is a candidate consumer.
DISK_KINDS = frozenset({"disk_pressure"})


def pods_by_node(observations: Iterable[Observation]) -> dict[str, list[PodView]]:
    """The listed pods of each node (``spec.nodeName``), in listing order."""
    out: dict[str, list[PodView]] = {}
    for pod in pod_views(observations):
        node = pod.text("spec", "nodeName")
        if node:
            out.setdefault(node, []).append(pod)
    return out


def _event_bindings(event: EventView) -> list[Binding]:
    bindings = [event.bind_object(), event.bind("reason")]
    message = excerpt(event.message, MAX_MESSAGE)
    if message:
        bindings.append(event.bind("message", text=message))
    return bindings


def _said(event: EventView) -> str:
    message = excerpt(event.message, MAX_MESSAGE)
    return f", {quote(one_line(message))}" if message else ""


def _on_node(event: EventView, rule: EventRule, pod: PodView) -> Finding:
    """The node's event as a supporting finding of the workload of a failing pod on it."""
    node = event.object_name
    bindings = [pod.bind_service(), pod.bind_name(), pod.bind("spec", "nodeName"), *_event_bindings(event)]
    statement = (
        f"{pod.service} runs on a node that reports {event.reason} "
        f"(pod {pod.name} runs on node {node}; node {node} reports {event.reason}{_said(event)})"
    )
    return Finding(
        kind=rule.kind,
        role=Role.SUPPORT,
        service=pod.service,
        statement=statement,
        bindings=tuple(bindings),
        strength=1,
        onset=parse_ts(event_time(event)),
        detail=event.reason,
    )


def writable_host_paths(pod: PodView) -> list[tuple[int, str]]:
    """(volume index, path) of the pod's hostPath volumes a container mounts without ``readOnly``."""
    volumes = pod.get("spec", "volumes")
    containers = pod.get("spec", "containers")
    written: set[str] = set()
    for container in containers if isinstance(containers, list) else []:
        mounts = container.get("volumeMounts") if isinstance(container, dict) else None
        for mount in mounts if isinstance(mounts, list) else []:
            if isinstance(mount, dict) and isinstance(mount.get("name"), str) and mount.get("readOnly") is not True:
                written.add(str(mount["name"]))
    out: list[tuple[int, str]] = []
    for v, volume in enumerate(volumes if isinstance(volumes, list) else []):
        if not isinstance(volume, dict) or volume.get("name") not in written:
            continue
        host = volume.get("hostPath")
        path = host.get("path") if isinstance(host, dict) else None
        if isinstance(path, str) and path:
            out.append((v, path))
    return out


def _host_path_writer(event: EventView, kind: str, pod: PodView, volume: int, path: str) -> Finding:
    """A pod of another workload that mounts a directory of the short node's own disk writable: a hypothesis."""
    node = event.object_name
    bindings = [
        pod.bind_service(),
        pod.bind_name(),
        pod.bind("spec", "nodeName"),
        pod.bind("spec", "volumes", volume, "hostPath", "path"),
        *_event_bindings(event),
    ]
    # (a path that is not one is bound, never written)
    shown = f"path {path}" if is_file_path(path) else "a path"
    statement = (
        f"{pod.service} may fill the disk of node {node}: its pod {pod.name} mounts {shown} of the node's own "
        f"disk to write, and node {node} reports {event.reason}{_said(event)}"
    )
    return Finding(
        kind=kind,
        role=Role.HYPOTHESIS,
        service=pod.service,
        statement=statement,
        bindings=tuple(bindings),
        onset=parse_ts(event_time(event)),
        pod=pod.name,
        detail=path,
    )


def node_findings(observations: Sequence[Observation], rules: Rules | None = None) -> list[Finding]:
    """The Node events a rule reads, said of the workloads with a failing pod on the node (one finding per rule
    kind and workload), and, for a node short of disk, the other workloads' pods that write to its own disk."""
    rules = rules or current_rules()
    views = event_views(observations, nodes=True)
    nodes = pods_by_node(observations)
    out: list[Finding] = []
    seen: set[tuple[str, str]] = set()
    for event in views:
        rule = rule_for(event, rules) if event.object_kind == "Node" and event.reason else None
        pods = nodes.get(event.object_name, [])
        if rule is None or not pods or cleared(event, rule, views):
            continue
        failing = [pod for pod in pods if not settled(pod, rules)]
        affected = {pod.service for pod in failing}
        found: list[tuple[tuple[str, str], Finding]] = []
        try:
            for pod in failing:
                found.append(((rule.kind, pod.service), _on_node(event, rule, pod)))
            if rule.kind in DISK_KINDS and affected:
                for pod in pods:
                    if pod.service in affected:
                        continue
                    for volume, path in writable_host_paths(pod)[:1]:
                        key = (f"{rule.kind}/writer", pod.service)
                        found.append((key, _host_path_writer(event, rule.kind, pod, volume, path)))
        except BindingError:
            continue
        for key, finding in found:
            if key not in seen:
                seen.add(key)
                out.append(finding)
    return out
