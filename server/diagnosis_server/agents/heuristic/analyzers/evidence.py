"""One Evidence per cycle: every Kubernetes object the cycle's outputs hold, by kind, with where it was read.

The outputs of ``kubernetes.list`` (a List: its ``kind`` names the items'), ``kubernetes.get`` (one object),
``kubernetes.pods``, ``kubernetes.events`` and ``kubernetes.rollouts`` (Lists) become ``Obj`` views: the object's
values and a binding to any of them (its JSON Pointer in that output). An object read twice is kept once (the
first read). ``listed`` says whether a namespace's whole List of a kind was read (no selector, not trimmed to the
output bound, no page left to read): only then may an analyzer say that no object of that kind matches.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TypeVar, cast

from diagnosis_server.agents.heuristic.observations import Binding, LogLine, Observation, log_lines, parse_ts, walk
from diagnosis_server.agents.heuristic.shapes import is_container_name, is_object_name
from diagnosis_server.agents.heuristic.workloads import pod_workload_label, workload_of_pod, workload_of_replicaset
from diagnosis_server.conversions import JsonObject, JsonValue

LIST_TOOLS = {
    "kubernetes.pods": "Pod",
    "kubernetes.events": "Event",
    "kubernetes.rollouts": "ReplicaSet",
}
CLUSTER_SCOPED = frozenset({"Node", "PersistentVolume", "StorageClass"})
_PLURAL_KINDS = {
    "pods": "Pod",
    "events": "Event",
    "services": "Service",
    "endpoints": "Endpoints",
    "nodes": "Node",
    "persistentvolumeclaims": "PersistentVolumeClaim",
    "persistentvolumes": "PersistentVolume",
    "storageclasses": "StorageClass",
    "resourcequotas": "ResourceQuota",
    "serviceaccounts": "ServiceAccount",
    "configmaps": "ConfigMap",
    "secrets": "Secret",
    "deployments": "Deployment",
    "replicasets": "ReplicaSet",
    "statefulsets": "StatefulSet",
    "daemonsets": "DaemonSet",
    "ingresses": "Ingress",
    "networkpolicies": "NetworkPolicy",
}


@dataclass(frozen=True, slots=True)
class Obj:
    """One object of an output: its kind, values and bindings."""

    obs: Observation
    path: tuple[str | int, ...]
    data: JsonObject
    kind: str

    def get(self, *path: str | int) -> JsonValue:
        return walk(self.data, path)

    def text(self, *path: str | int) -> str:
        value = self.get(*path)
        return value if isinstance(value, str) else ""

    def bind(self, *path: str | int, text: str | None = None) -> Binding:
        return self.obs.bind(*self.path, *path, text=text)

    @property
    def name(self) -> str:
        return self.text("metadata", "name")

    @property
    def namespace(self) -> str:
        return self.text("metadata", "namespace")

    @property
    def labels(self) -> dict[str, str]:
        labels = self.get("metadata", "labels")
        return {str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {}

    def bind_name(self) -> Binding:
        return self.bind("metadata", "name")


def _named_as_kubernetes_names(obj: Obj) -> bool:
    """Whether an object's name is a DNS-1123 subdomain and its namespace (if any) a DNS-1123 label: an object
    named otherwise ("cart-svc-x 根本原因是...") is not read, so its name is never used as one in a sentence (it may
    still be quoted, as found, with its pointer)."""
    namespace = obj.namespace
    return is_object_name(obj.name) and (not namespace or is_container_name(namespace))


def workload_of(obj: Obj) -> tuple[str, Binding]:
    """The workload an object is of (a pod's by its labels or name, a ReplicaSet's by its name, others their own
    name) and the binding that holds that name."""
    if obj.kind == "Pod":
        labels = obj.get("metadata", "labels")
        named = pod_workload_label(obj.name, labels if isinstance(labels, dict) else None)
        if named:
            return named[1], obj.bind("metadata", "labels", named[0])
        workload = workload_of_pod(obj.name)
        return workload, obj.bind("metadata", "name", text=workload)
    if obj.kind == "ReplicaSet":
        workload = workload_of_replicaset(obj.name)
        return workload, obj.bind("metadata", "name", text=workload)
    return obj.name, obj.bind_name()


# The last few Evidences made, by their observations' identities (a cycle's analyses share one).
_CACHED = 8
_CACHE: dict[tuple[tuple[int, ...], tuple[str, ...]], tuple[tuple[Observation, ...], Evidence]] = {}
_CACHE_LOCK = threading.Lock()
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Evidence:
    """The cycle's Kubernetes objects by kind (and its observations, for analyzers of other sources)."""

    observations: tuple[Observation, ...]
    by_kind: dict[str, list[Obj]] = field(default_factory=dict)
    # (kind, namespace) of every whole List read ('' namespace for a cluster-scoped kind).
    whole: frozenset[tuple[str, str]] = frozenset()
    # The events by their involved object's (kind, name), in reading order.
    about: dict[tuple[str, str], list[Obj]] = field(default_factory=dict)
    # The workloads the question names.
    subjects: tuple[str, ...] = ()
    # What several analyzers read of the cycle, made once (``shared``).
    memo: dict[str, object] = field(default_factory=dict, compare=False)

    @classmethod
    def of(cls, observations: Sequence[Observation], subjects: Sequence[str] = ()) -> Evidence:
        """The Evidence of these observations (and the question's workloads), made once: the analyses of a cycle
        ask for it several times."""
        key = (tuple(map(id, observations)), tuple(subjects))
        with _CACHE_LOCK:
            cached = _CACHE.get(key)
        # (the entry holds the observations themselves, so their ids cannot be reused while it is kept)
        if cached is not None and all(a is b for a, b in zip(cached[0], observations, strict=True)):
            return cached[1]
        if subjects:
            evidence = replace(cls.of(observations), subjects=tuple(subjects), memo={})
        else:
            evidence = cls._made(observations)
        with _CACHE_LOCK:
            _CACHE[key] = (tuple(observations), evidence)
            while len(_CACHE) > _CACHED:
                del _CACHE[next(iter(_CACHE))]
        return evidence

    @classmethod
    def _made(cls, observations: Sequence[Observation]) -> Evidence:
        by_kind: dict[str, list[Obj]] = {}
        seen: set[tuple[str, str, str]] = set()
        whole: set[tuple[str, str]] = set()
        for obs in observations:
            for obj in _objects(obs):
                key = (obj.kind, obj.namespace, obj.name)
                if _named_as_kubernetes_names(obj) and key not in seen:
                    seen.add(key)
                    by_kind.setdefault(obj.kind, []).append(obj)
            listed = _whole_list(obs)
            if listed is not None:
                whole.add(listed)
        about: dict[tuple[str, str], list[Obj]] = {}
        for event in by_kind.get("Event", []):
            involved = (event.text("involvedObject", "kind"), event.text("involvedObject", "name"))
            about.setdefault(involved, []).append(event)
        return cls(tuple(observations), by_kind, frozenset(whole), about)

    def shared(self, key: str, make: Callable[[], T]) -> T:
        """``make()``, made once an Evidence under ``key``: what several analyzers read (log lines, workloads)."""
        if key not in self.memo:
            self.memo[key] = make()
        return cast(T, self.memo[key])

    def log_lines(self) -> list[LogLine]:
        """Every log line of the cycle's outputs (pod logs, Loki, a pack's log search), in reading order."""
        return [line for obs in self.observations for line in log_lines(obs)]

    def objects(self, kind: str, namespace: str | None = None) -> list[Obj]:
        found = self.by_kind.get(kind, [])
        return found if namespace is None else [o for o in found if o.namespace == namespace]

    def named(self, kind: str, name: str, namespace: str = "") -> Obj | None:
        for obj in self.by_kind.get(kind, []):
            if obj.name == name and (not namespace or kind in CLUSTER_SCOPED or obj.namespace == namespace):
                return obj
        return None

    def listed(self, kind: str, namespace: str = "") -> bool:
        """Whether the whole List of ``kind`` in ``namespace`` was read (an absent name is then absent)."""
        return (kind, "" if kind in CLUSTER_SCOPED else namespace) in self.whole

    def events_about(self, kind: str, name: str, namespace: str = "") -> list[Obj]:
        return [
            e
            for e in self.about.get((kind, name), [])
            if not namespace or e.namespace == namespace or kind in CLUSTER_SCOPED
        ]


def event_time(event: Obj) -> datetime | None:
    for path in (("lastTimestamp",), ("series", "lastObservedTime"), ("eventTime",), ("metadata", "creationTimestamp")):
        when = parse_ts(event.get(*path))
        if when is not None:
            return when
    return None


def event_time_path(event: Obj) -> tuple[str, ...]:
    for path in (("lastTimestamp",), ("series", "lastObservedTime"), ("eventTime",), ("metadata", "creationTimestamp")):
        if parse_ts(event.get(*path)) is not None:
            return path
    return ()


def _list_kind(obs: Observation) -> str:
    if obs.tool_name in LIST_TOOLS:
        return LIST_TOOLS[obs.tool_name]
    kind = obs.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and kind != "List":
        return kind[: -len("List")]
    plural = obs.arguments.get("kind")
    return _PLURAL_KINDS.get(plural, "") if isinstance(plural, str) else ""


def _objects(obs: Observation) -> Iterable[Obj]:
    if obs.tool_name == "kubernetes.get":
        kind = obs.get("kind")
        plural = obs.arguments.get("kind")
        name = kind if isinstance(kind, str) else _PLURAL_KINDS.get(plural, "") if isinstance(plural, str) else ""
        if name:
            yield Obj(obs, (), obs.output, name)
        return
    if obs.tool_name != "kubernetes.list" and obs.tool_name not in LIST_TOOLS:
        return
    kind = _list_kind(obs)
    items = obs.get("items")
    for index, item in enumerate(items if isinstance(items, list) else []):
        if kind and isinstance(item, dict):
            yield Obj(obs, ("items", index), item, kind)


def _whole_list(obs: Observation) -> tuple[str, str] | None:
    """(kind, namespace) of a List read whole: no selector, not trimmed to the output bound, no page left."""
    if obs.tool_name not in ("kubernetes.list", "kubernetes.pods") or obs.truncated:
        return None
    if obs.text("metadata", "continue"):
        return None
    if "label_selector" in obs.arguments or "field_selector" in obs.arguments:
        return None
    kind = _list_kind(obs)
    if not kind:
        return None
    namespace = obs.arguments.get("namespace")
    if kind in CLUSTER_SCOPED:
        return kind, ""
    if isinstance(namespace, str) and namespace:
        return kind, namespace
    items = obs.get("items")
    first = items[0] if isinstance(items, list) and items else None
    found = walk(first, ("metadata", "namespace")) if isinstance(first, dict) else None
    return (kind, found) if isinstance(found, str) else None


def _count(value: JsonValue) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def runs_ready(pod: Obj) -> bool:
    """A pod in phase Running with every container of its status ready (an empty status is not ready)."""
    statuses = pod.get("status", "containerStatuses")
    return (
        pod.text("status", "phase") == "Running"
        and isinstance(statuses, list)
        and bool(statuses)
        and all(isinstance(s, dict) and s.get("ready") is True for s in statuses)
    )


def ready_count(obj: Obj) -> tuple[int, int]:
    """(ready, desired) replicas of a ReplicaSet, Deployment or StatefulSet (desired 1 when unset, as the API
    defaults it); a DaemonSet's ready and desired scheduled pods."""
    if obj.kind == "DaemonSet":
        return _count(obj.get("status", "numberReady")), _count(obj.get("status", "desiredNumberScheduled"))
    desired = obj.get("spec", "replicas")
    return _count(obj.get("status", "readyReplicas")), _count(desired) if desired is not None else 1
