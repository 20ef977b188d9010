"""Tool outputs in the upstreams' own shapes, built field by field for each test.

- ``kubernetes.pods``: a core/v1 PodList (``items[].metadata``, ``items[].status.phase``, ``conditions``,
  ``containerStatuses[].state`` / ``lastState`` with ``waiting`` or ``terminated`` reasons);
- ``kubernetes.events``: a core/v1 EventList (``involvedObject``, ``reason``, ``message``, ``lastTimestamp`` or,
  from newer reporters, only ``eventTime``);
- ``k8s.events``: a recorded pack's event records (``ts``, ``kind``, ``object``, ``reason``, ``message``, ``service``);
- ``prometheus.query`` / ``prometheus.query_range``: the HTTP API body, ``{"status": "success", "data":
  {"resultType": "vector" | "matrix", "result": [...]}}`` with sample values as strings;
- ``kubernetes.pod_logs``: ``{namespace, pod, container, previous, lines}``;
- ``loki.query_range``: ``{"status": "success", "data": {"resultType": "streams", "result": [{"stream": {...},
  "values": [["<unix ns>", "<line>"], ...]}]}}``.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from itertools import count
from typing import Any

from diagnosis_server.agents.heuristic.observations import Observation
from diagnosis_server.conversions import JsonObject, JsonValue

from .._packs import event_record

NAMESPACE = "greenfield"
START = datetime(2025, 2, 11, 6, 40, tzinfo=UTC)
T0 = int(START.timestamp())

_ids = count(1)


def at(minutes: float) -> str:
    """An RFC 3339 time ``minutes`` after START, as the API server writes it."""
    return (START + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def observation(tool_name: str, output: JsonObject, arguments: JsonObject | None = None) -> Observation:
    n = next(_ids)
    return Observation(n, tool_name, arguments or {}, f"inv-an-{n:04d}", output)


# ------------------------------------------------------------------------------------------ pods
def running(minutes: float = 0) -> dict[str, Any]:
    return {"running": {"startedAt": at(minutes)}}


def waiting(reason: str, message: str = "") -> dict[str, Any]:
    state: dict[str, Any] = {"reason": reason}
    if message:
        state["message"] = message
    return {"waiting": state}


def terminated(
    reason: str, exit_code: int, *, message: str = "", started: float = 0, finished: float = 5
) -> dict[str, Any]:
    state: dict[str, Any] = {
        "reason": reason,
        "exitCode": exit_code,
        "startedAt": at(started),
        "finishedAt": at(finished),
        "containerID": "containerd://4f1c0a9e7d2b",
    }
    if message:
        state["message"] = message
    return {"terminated": state}


def container(
    name: str,
    *,
    ready: bool = True,
    restarts: int = 0,
    state: dict[str, Any] | None = None,
    last_state: dict[str, Any] | None = None,
    image: str = "",
) -> dict[str, Any]:
    return {
        "name": name,
        "image": image or f"registry.greenfield.example/{name}:1.8.2",
        "ready": ready,
        "started": ready,
        "restartCount": restarts,
        "state": state if state is not None else running(),
        "lastState": last_state or {},
    }


def condition(kind: str, status: bool, reason: str = "", message: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {"type": kind, "status": "True" if status else "False", "lastTransitionTime": at(0)}
    if reason:
        out["reason"] = reason
    if message:
        out["message"] = message
    return out


def ready_conditions(ready: bool = True) -> list[dict[str, Any]]:
    not_ready = "" if ready else "ContainersNotReady"
    return [
        condition("Initialized", True),
        condition("Ready", ready, not_ready),
        condition("ContainersReady", ready, not_ready),
        condition("PodScheduled", True),
    ]


def pod(
    name: str,
    *,
    app: str | None = None,
    phase: str = "Running",
    containers: Sequence[dict[str, Any]] = (),
    init_containers: Sequence[dict[str, Any]] = (),
    conditions: Sequence[dict[str, Any]] | None = None,
    reason: str = "",
    message: str = "",
    namespace: str = NAMESPACE,
) -> dict[str, Any]:
    """A Pod as ``GET /api/v1/namespaces/{ns}/pods`` lists it; ``app`` sets ``app.kubernetes.io/name``."""
    labels: dict[str, str] = {}
    if app:
        labels["app.kubernetes.io/name"] = app
    status: dict[str, Any] = {"phase": phase, "hostIP": "10.20.3.14", "podIP": "10.244.3.27", "qosClass": "Burstable"}
    status["conditions"] = (
        list(conditions) if conditions is not None else ready_conditions(all(c.get("ready") for c in containers))
    )
    if init_containers:
        status["initContainerStatuses"] = list(init_containers)
    if containers:
        status["containerStatuses"] = list(containers)
    if reason:
        status["reason"] = reason
    if message:
        status["message"] = message
    return {
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": f"7c1e{len(name):04d}-3b1f-4c55-9a0e-{zlib.crc32(name.encode()):012d}",
            "labels": labels,
            "creationTimestamp": at(-60),
        },
        "spec": {"nodeName": "pool-b-node-3", "containers": [{"name": c["name"]} for c in containers]},
        "status": status,
    }


def _object_list(tool_name: str, kind: str, resource_version: str, items: Sequence[dict[str, Any]]) -> Observation:
    """A core/v1 list of ``items`` as ``tool_name`` returns it for the namespace."""
    output: JsonObject = {
        "apiVersion": "v1",
        "kind": kind,
        "metadata": {"resourceVersion": resource_version},
        "items": list(items),
    }
    return observation(tool_name, output, {"namespace": NAMESPACE})


def pod_list(*items: dict[str, Any]) -> Observation:
    return _object_list("kubernetes.pods", "PodList", "5810233", items)


# ------------------------------------------------------------------------------------------ events
def k8s_event(
    kind: str,
    name: str,
    reason: str,
    message: str,
    minutes: float | None,
    *,
    type_: str = "Warning",
    component: str = "kubelet",
    event_time: str | None = None,
    namespace: str = NAMESPACE,
) -> dict[str, Any]:
    """A core/v1 Event; ``minutes=None`` leaves ``lastTimestamp`` null (events.k8s.io reporters set only
    ``eventTime``)."""
    return {
        "metadata": {"name": f"{name}.1823a{len(reason):02d}f4c9", "namespace": namespace},
        "involvedObject": {"kind": kind, "namespace": namespace, "name": name, "apiVersion": "v1"},
        "reason": reason,
        "message": message,
        "source": {"component": component},
        "firstTimestamp": at(minutes) if minutes is not None else None,
        "lastTimestamp": at(minutes) if minutes is not None else None,
        "eventTime": event_time,
        "count": 1,
        "type": type_,
        "reportingComponent": component,
    }


def event_list(*items: dict[str, Any]) -> Observation:
    return _object_list("kubernetes.events", "EventList", "5810240", items)


def pack_event(minutes: float, service: str | None, kind: str, obj: str, reason: str, message: str) -> dict[str, Any]:
    return event_record(at(minutes), NAMESPACE, service, kind, obj, reason, message)


def pack_events(*records: dict[str, Any]) -> Observation:
    return observation("k8s.events", {"events": list(records)}, {})


# ------------------------------------------------------------------------------------------ prometheus
def ranged(labels: dict[str, str], values: Sequence[float | str], *, step: int = 60) -> dict[str, Any]:
    return {"metric": dict(labels), "values": [[T0 + i * step, str(v)] for i, v in enumerate(values)]}


def instant(labels: dict[str, str], value: float | str) -> dict[str, Any]:
    return {"metric": dict(labels), "value": [T0, str(value)]}


def query_range(query: str, *series: dict[str, Any]) -> Observation:
    output: JsonObject = {"status": "success", "data": {"resultType": "matrix", "result": list(series)}}
    return observation("prometheus.query_range", output, {"query": query})


def query(query_text: str, *samples: dict[str, Any]) -> Observation:
    output: JsonObject = {"status": "success", "data": {"resultType": "vector", "result": list(samples)}}
    return observation("prometheus.query", output, {"query": query_text})


# ------------------------------------------------------------------------------------------ logs
def pod_logs(pod_name: str, *lines: str, container_name: str = "app") -> Observation:
    output: JsonObject = {
        "namespace": NAMESPACE,
        "pod": pod_name,
        "container": container_name,
        "previous": False,
        "lines": list(lines),
    }
    return observation("kubernetes.pod_logs", output, {"namespace": NAMESPACE, "pod": pod_name})


def loki(
    *streams: tuple[dict[str, str], Sequence[tuple[float, str]]], query_text: str = '{namespace="greenfield"}'
) -> Observation:
    """A Loki streams answer: each stream's labels and (minutes after START, line) values."""
    result: list[JsonValue] = [
        {
            "stream": dict(labels),
            "values": [[str(int((T0 + minutes * 60) * 1e9)), line] for minutes, line in values],
        }
        for labels, values in streams
    ]
    output: JsonObject = {"status": "success", "data": {"resultType": "streams", "result": result}}
    return observation("loki.query_range", output, {"query": query_text, "limit": 200})
