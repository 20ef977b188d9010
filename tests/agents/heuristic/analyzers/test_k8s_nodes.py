"""Node analyzers (``nodes.py``) and the reads of a failing pod's node's events (``follow_ups.node_event_calls``).

The kubelet reports a node's conditions and its eviction manager's work as events about the Node, in the
``default`` namespace: "Node <name> status is now: NodeHasDiskPressure" (Normal), "Attempting to reclaim
ephemeral-storage" (EvictionThresholdMet, Warning), the image garbage collector's FreeDiskSpaceFailed. They are said
of the workloads whose failing pods run on that node, as support (R-A-1), never as their cause; a pod of another
workload that mounts a directory of the node's own disk to write is a hypothesis, never more (R-V-4).
"""

from __future__ import annotations

import copy
from typing import Any

from diagnosis_server.agents.heuristic.analyzers.k8s_nodes import node_findings
from diagnosis_server.agents.heuristic.executor import reads_namespace
from diagnosis_server.agents.heuristic.findings import Role
from diagnosis_server.agents.heuristic.follow_ups import MAX_NODES, follow_up_calls, node_event_calls
from diagnosis_server.agents.heuristic.observations import Observation

from ._checks import assert_sound, kinds
from ._shapes import container, event_list, k8s_event, observation, pod, pod_list, running

NODE = "pool-b-node-3"
EVICTED = "seed-sorter-6d9f7c8b4d-x2k9q"
EVICTION = (
    "The node was low on resource: ephemeral-storage. Threshold quantity: 10737418240, available: 10413212Ki. "
    "Container seed-sorter was using 88Ki, request is 0, has larger consumption of ephemeral-storage. "
)


def _node_event(reason: str, message: str, minutes: float, *, type_: str = "Warning") -> dict[str, Any]:
    """An event about a Node as the kubelet records it: in ``default``, its involved object cluster-scoped."""
    event = k8s_event("Node", NODE, reason, message, minutes, type_=type_, namespace="default")
    del event["involvedObject"]["namespace"]
    event["involvedObject"]["uid"] = NODE
    return event


def _evicted(name: str = EVICTED, node: str = NODE, app: str = "seed-sorter") -> dict[str, Any]:
    item = pod(
        name,
        app=app,
        phase="Failed",
        reason="Evicted",
        message=EVICTION,
        containers=[container(app, ready=False, state={"terminated": {"reason": "Error", "exitCode": 137}})],
    )
    item["spec"]["nodeName"] = node
    return item


def _ready(name: str, app: str) -> dict[str, Any]:
    return pod(name, app=app, containers=[container(app, state=running(-30))])


def _host_path_writer(read_only: bool = False) -> dict[str, Any]:
    """A Fluent Bit DaemonSet pod buffering under a hostPath of the node (and reading /var/log, read-only)."""
    item = _ready("log-shipper-mhfdv", "log-shipper")
    item["metadata"]["namespace"] = "logging"
    item["spec"]["containers"] = [
        {
            "name": "log-shipper",
            "volumeMounts": [
                {"name": "buffer", "mountPath": "/var/lib/fluent-bit", "readOnly": read_only},
                {"name": "varlog", "mountPath": "/var/log", "readOnly": True},
            ],
        }
    ]
    item["spec"]["volumes"] = [
        {"name": "buffer", "hostPath": {"path": "/var/lib/fluent-bit", "type": "DirectoryOrCreate"}},
        {"name": "varlog", "hostPath": {"path": "/var/log", "type": ""}},
    ]
    return item


def _node_read(*events: dict[str, Any]) -> Observation:
    selector = f"involvedObject.kind=Node,involvedObject.name={NODE}"
    output = copy.deepcopy(event_list(*events).output)
    return observation("kubernetes.events", output, {"namespace": "default", "field_selector": selector})


def test_disk_pressure_on_the_node_supports_the_evicted_pods_workload_only() -> None:
    """NodeHasDiskPressure is said of seed-sorter (its evicted pod runs there): support, binding the pod's
    spec.nodeName and the event's node, reason and message. A ready pod on the node says nothing."""
    pods = pod_list(_evicted(), _ready("label-printer-5c7d9b6f48-q8m2x", "label-printer"))
    events = _node_read(
        _node_event("NodeHasDiskPressure", f"Node {NODE} status is now: NodeHasDiskPressure", 12, type_="Normal")
    )
    findings = node_findings([pods, events])
    assert_sound(findings, [pods, events])
    assert [(f.kind, f.role, f.service) for f in findings] == [("disk_pressure", Role.SUPPORT, "seed-sorter")]
    paths = [b.raw_path for b in findings[0].bindings]
    assert "/items/0/spec/nodeName" in paths and "/items/0/involvedObject/name" in paths
    assert "status is now: NodeHasDiskPressure" in findings[0].statement


def test_the_eviction_managers_and_image_gcs_events_read_by_resource() -> None:
    """EvictionThresholdMet "Attempting to reclaim memory" is memory pressure, "... ephemeral-storage" and
    FreeDiskSpaceFailed disk pressure; "Attempting to reclaim pids" is neither."""
    pods = pod_list(_evicted())
    gc = (
        "Failed to garbage collect required amount of images. Attempted to free 6442450944 bytes, "
        "but only found 0 bytes eligible to free."
    )
    cases = {
        "Attempting to reclaim memory": ("EvictionThresholdMet", {"memory_pressure"}),
        "Attempting to reclaim ephemeral-storage": ("EvictionThresholdMet", {"disk_pressure"}),
        "Attempting to reclaim pids": ("EvictionThresholdMet", set()),
        gc: ("FreeDiskSpaceFailed", {"disk_pressure"}),
    }
    for message, (reason, expected) in cases.items():
        events = _node_read(_node_event(reason, message, 10))
        findings = node_findings([pods, events])
        assert_sound(findings, [pods, events])
        assert kinds(findings) == expected, message


def test_a_node_that_reports_no_disk_pressure_later_says_nothing() -> None:
    pods = pod_list(_evicted())
    events = _node_read(
        _node_event("NodeHasDiskPressure", f"Node {NODE} status is now: NodeHasDiskPressure", 5, type_="Normal"),
        _node_event("NodeHasNoDiskPressure", f"Node {NODE} status is now: NodeHasNoDiskPressure", 9, type_="Normal"),
    )
    assert node_findings([pods, events]) == []


def test_a_node_event_about_another_node_or_without_pods_listed_says_nothing() -> None:
    pods = pod_list(_evicted(node="pool-b-node-7"))
    events = _node_read(_node_event("EvictionThresholdMet", "Attempting to reclaim ephemeral-storage", 10))
    assert node_findings([pods, events]) == []
    assert node_findings([events]) == []


def test_not_ready_and_system_oom_on_the_node_are_support_not_cause() -> None:
    pods = pod_list(_evicted())
    events = _node_read(
        _node_event("NodeNotReady", f"Node {NODE} status is now: NodeNotReady", 8, type_="Normal"),
        _node_event("SystemOOM", "System OOM encountered, victim process: java, pid: 28213", 9),
    )
    findings = node_findings([pods, events])
    assert_sound(findings, [pods, events])
    assert {(f.kind, f.role) for f in findings} == {("node_not_ready", Role.SUPPORT), ("oom", Role.SUPPORT)}


def test_a_pod_writing_to_the_short_nodes_own_disk_is_a_hypothesis_only() -> None:
    """log-shipper mounts hostPath /var/lib/fluent-bit to write on the node short of disk: a hypothesis naming
    the path and the node's report; with the mount read-only, nothing."""
    events = _node_read(_node_event("EvictionThresholdMet", "Attempting to reclaim ephemeral-storage", 10))
    pods = pod_list(_evicted(), _host_path_writer())
    findings = node_findings([pods, events])
    assert_sound(findings, [pods, events])
    writer = next(f for f in findings if f.service == "log-shipper")
    assert writer.role is Role.HYPOTHESIS and writer.kind == "disk_pressure"
    assert "/var/lib/fluent-bit" in writer.statement and "/var/log" not in writer.statement
    assert writer.statement.startswith("log-shipper may fill the disk of node")
    read_only = pod_list(_evicted(), _host_path_writer(read_only=True))
    assert {f.service for f in node_findings([read_only, events])} == {"seed-sorter"}


def test_the_failing_pods_nodes_events_are_read_bounded_and_only_where_the_tool_may_read() -> None:
    """All the events of the nodes of failing pods (the question's workload's first), at most MAX_NODES;
    none of a node whose pods all run ready; none when the events tool may not read ``default``."""
    other = _evicted("parcel-router-7b8c9d6f5-k2m4p", node="pool-a-node-9", app="parcel-router")
    pods = [_evicted(f"seed-sorter-6d9f7c8b4d-{i:05d}", node=f"pool-b-node-{i}") for i in range(4)]
    ready = _ready("label-printer-5c7d9b6f48-q8m2x", "label-printer")
    ready["spec"]["nodeName"] = "pool-c-node-7"
    listing = pod_list(other, *pods, ready)

    def nodes(calls: list[tuple[str, Any]]) -> list[str]:
        assert all(tool == "kubernetes.events" and arguments["namespace"] == "default" for tool, arguments in calls)
        return [
            arguments["field_selector"].removeprefix("involvedObject.kind=Node,involvedObject.name=")
            for _, arguments in calls
        ]

    calls = node_event_calls([listing], ["seed-sorter"])
    # The question's workload's nodes first, though another workload's failing pod is listed before them.
    assert nodes(calls) == ["pool-b-node-0", "pool-b-node-1"] and len(calls) == MAX_NODES
    assert nodes(node_event_calls([listing], [])) == ["pool-a-node-9", "pool-b-node-0"]
    # A node whose pods all run ready is never read.
    assert "pool-c-node-7" not in nodes(node_event_calls([listing], ["label-printer"]))
    assert node_event_calls([pod_list(ready)], ["label-printer"]) == []
    tools = ["kubernetes.events", "kubernetes.pod_logs", "kubernetes.rollouts"]
    with_nodes = follow_up_calls([listing], ["seed-sorter"], tools)
    assert calls[0] in with_nodes
    without = follow_up_calls([listing], ["seed-sorter"], tools, node_events=False)
    assert not any("involvedObject.kind=Node" in str(arguments) for _, arguments in without)


def test_the_events_tool_reads_default_only_when_its_namespaces_allow_it() -> None:
    def payload(enum: list[str] | None) -> dict[str, Any]:
        namespace: dict[str, Any] = {"type": "string"}
        if enum is not None:
            namespace["enum"] = enum
        schema = {"type": "object", "properties": {"namespace": namespace}}
        return {"tools": [{"name": "kubernetes.events", "description": "", "input_schema": schema}]}

    assert reads_namespace(payload(None), "kubernetes.events", "default")
    assert reads_namespace(payload(["orders", "default"]), "kubernetes.events", "default")
    assert not reads_namespace(payload(["orders"]), "kubernetes.events", "default")
    assert not reads_namespace(payload(None), "kubernetes.pods", "default")
