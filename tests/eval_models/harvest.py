"""What a careful reader finds in recorded tool outputs: facts, each a set of values at their JSON pointers."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

# A recorded output (JSON) and an invocation as the case file holds it.
Json = dict[str, Any]
MAX_MATCHED = 300


@dataclass(frozen=True)
class Leaf:
    """One value of one recorded output: where it is and the text a binding copies from it."""

    invocation_id: str
    tool_name: str
    path: str
    text: str


@dataclass
class Fact:
    """A finding of one output item: its kind (``termination``, ``event``, ``log``, ...) and its leaves by role."""

    kind: str
    leaves: dict[str, Leaf]
    extra: dict[str, Any] = field(default_factory=dict)

    def text(self, role: str) -> str:
        return self.leaves[role].text

    def has(self, *roles: str) -> bool:
        return all(role in self.leaves for role in roles)

    def haystack(self) -> str:
        return " ".join(leaf.text for leaf in self.leaves.values())


def pointer(*parts: object) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def json_text(value: Any) -> str:
    """A scalar as its JSON text (integers without a fraction)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def matched(value: str, key: str = "") -> str:
    """What a model copies from a long value: the whole value, or for a long one the line that holds ``key``."""
    if len(value) <= MAX_MATCHED:
        return value
    lines = [line for line in value.splitlines() if line.strip()]
    holding = [line for line in lines if key and key in line] or lines[:1]
    return holding[0].strip()[:MAX_MATCHED] if holding else value[:MAX_MATCHED]


class Reader:
    """The facts of one invocation's output, by the output's shape."""

    def __init__(self, invocation: Json) -> None:
        self.inv = invocation["invocation_id"]
        self.tool = invocation["tool_name"]
        self.output = invocation["output"]

    def leaf(self, value: Any, *parts: object) -> Leaf | None:
        if value is None or isinstance(value, dict | list) or json_text(value) == "":
            return None
        return Leaf(self.inv, self.tool, pointer(*parts), json_text(value))

    def fact(self, kind: str, extra: Json | None = None, /, **values: tuple[Any, tuple[object, ...]]) -> Fact:
        leaves = {}
        for role, (value, parts) in values.items():
            found = self.leaf(value, *parts)
            if found is not None:
                leaves[role] = found
        return Fact(kind, leaves, extra or {})

    def facts(self) -> Iterator[Fact]:
        out = self.output
        if not isinstance(out, dict):
            return
        if self.tool == "kubernetes.pods":
            yield from self._pods(out)
        elif self.tool == "kubernetes.events":
            for i, item in enumerate(out.get("items", [])):
                obj = item.get("involvedObject", {})
                yield self.fact(
                    "event",
                    {"obj_kind": obj.get("kind", "")},
                    object=(obj.get("name"), ("items", i, "involvedObject", "name")),
                    reason=(item.get("reason"), ("items", i, "reason")),
                    message=(item.get("message"), ("items", i, "message")),
                    count=(item.get("count"), ("items", i, "count")),
                    ts=(item.get("lastTimestamp"), ("items", i, "lastTimestamp")),
                    etype=(item.get("type"), ("items", i, "type")),
                )
        elif self.tool == "k8s.events":
            for i, item in enumerate(out.get("events", [])):
                yield self.fact(
                    "event",
                    {"obj_kind": item.get("kind", "")},
                    object=(item.get("object"), ("events", i, "object")),
                    reason=(item.get("reason"), ("events", i, "reason")),
                    message=(item.get("message"), ("events", i, "message")),
                    count=(item.get("count"), ("events", i, "count")),
                    ts=(item.get("ts"), ("events", i, "ts")),
                    service=(item.get("service"), ("events", i, "service")),
                    etype=(item.get("type"), ("events", i, "type")),
                )
        elif self.tool == "logs.search":
            for i, line in enumerate(out.get("lines", [])):
                yield self.fact(
                    "log",
                    service=(out.get("service"), ("service",)),
                    message=(line.get("message"), ("lines", i, "message")),
                    level=(line.get("level"), ("lines", i, "level")),
                    ts=(line.get("ts"), ("lines", i, "ts")),
                )
        elif self.tool == "kubernetes.pod_logs":
            for i, line in enumerate(out.get("lines", [])):
                yield self.fact(
                    "pod_log",
                    {"previous": out.get("previous")},
                    pod=(out.get("pod"), ("pod",)),
                    container=(out.get("container"), ("container",)),
                    message=(line, ("lines", i)),
                )
        elif self.tool == "deploys.list":
            for i, item in enumerate(out.get("deploys", [])):
                yield self.fact(
                    "deploy",
                    service=(item.get("service"), ("deploys", i, "service")),
                    version=(item.get("version"), ("deploys", i, "version")),
                    previous=(item.get("previous_version"), ("deploys", i, "previous_version")),
                    ts=(item.get("ts"), ("deploys", i, "ts")),
                    summary=(item.get("summary"), ("deploys", i, "summary")),
                )
        elif self.tool == "topology.dependencies":
            deps = out.get("depends_on", [])
            dependents = out.get("dependents", [])
            yield self.fact(
                "topology",
                {"depends_on": deps, "dependents": dependents},
                service=(out.get("service"), ("service",)),
                svc_kind=(out.get("kind"), ("kind",)),
                dep=(deps[0] if deps else None, ("depends_on", 0)),
                dependent=(dependents[0] if dependents else None, ("dependents", 0)),
            )
        elif self.tool == "prometheus.query":
            for r, series in enumerate(out.get("data", {}).get("result", [])):
                metric = series.get("metric", {})
                if "reason" in metric and "pod" in metric:
                    yield self.fact(
                        "termination",
                        {"last": True, "metric": metric.get("__name__", "")},
                        pod=(metric.get("pod"), ("data", "result", r, "metric", "pod")),
                        container=(metric.get("container"), ("data", "result", r, "metric", "container")),
                        reason=(metric.get("reason"), ("data", "result", r, "metric", "reason")),
                        metric=(metric.get("__name__"), ("data", "result", r, "metric", "__name__")),
                    )
        elif self.tool == "loki.query_range":
            for r, stream in enumerate(out.get("data", {}).get("result", [])):
                labels = stream.get("stream", {})
                label = next((k for k in ("app", "service", "container", "pod") if k in labels), None)
                for k, pair in enumerate(stream.get("values", [])):
                    yield self.fact(
                        "log",
                        service=(labels.get(label) if label else None, ("data", "result", r, "stream", label or "")),
                        message=(pair[1], ("data", "result", r, "values", k, 1)),
                    )

    def _pods(self, out: Json) -> Iterator[Fact]:
        for i, pod in enumerate(out.get("items", [])):
            name = (pod.get("metadata", {}).get("name"), ("items", i, "metadata", "name"))
            labels = pod.get("metadata", {}).get("labels", {})
            label = next((k for k in ("app.kubernetes.io/name", "app", "k8s-app") if k in labels), None)
            app = (labels.get(label) if label else None, ("items", i, "metadata", "labels", label or ""))
            status = pod.get("status", {})
            spec = pod.get("spec", {})
            if status.get("reason"):
                yield self.fact(
                    "pod_status",
                    pod=name,
                    service=app,
                    reason=(status.get("reason"), ("items", i, "status", "reason")),
                    message=(status.get("message"), ("items", i, "status", "message")),
                    phase=(status.get("phase"), ("items", i, "status", "phase")),
                )
            for c, cond in enumerate(status.get("conditions", [])):
                if cond.get("type") == "PodScheduled" and cond.get("status") == "False":
                    yield self.fact(
                        "unscheduled",
                        pod=name,
                        service=app,
                        reason=(cond.get("reason"), ("items", i, "status", "conditions", c, "reason")),
                        message=(cond.get("message"), ("items", i, "status", "conditions", c, "message")),
                        phase=(status.get("phase"), ("items", i, "status", "phase")),
                    )
            for key, spec_key in (("initContainerStatuses", "initContainers"), ("containerStatuses", "containers")):
                specs = {s.get("name"): (j, s) for j, s in enumerate(spec.get(spec_key, []))}
                for j, cs in enumerate(status.get(key, [])):
                    base = ("items", i, "status", key, j)
                    common = {
                        "pod": name,
                        "service": app,
                        "namespace": (pod.get("metadata", {}).get("namespace"), ("items", i, "metadata", "namespace")),
                        "container": (cs.get("name"), (*base, "name")),
                        "restarts": (cs.get("restartCount"), (*base, "restartCount")),
                        "image": (cs.get("image"), (*base, "image")),
                    }
                    extra = {"init": key.startswith("init")}
                    waiting = cs.get("state", {}).get("waiting")
                    if waiting:
                        yield self.fact(
                            "waiting",
                            extra,
                            **common,
                            reason=(waiting.get("reason"), (*base, "state", "waiting", "reason")),
                            message=(waiting.get("message"), (*base, "state", "waiting", "message")),
                        )
                    for state_key in ("lastState", "state"):
                        term = cs.get(state_key, {}).get("terminated")
                        if term:
                            yield self.fact(
                                "termination",
                                {**extra, "last": state_key == "lastState"},
                                **common,
                                reason=(term.get("reason"), (*base, state_key, "terminated", "reason")),
                                code=(term.get("exitCode"), (*base, state_key, "terminated", "exitCode")),
                                finished=(term.get("finishedAt"), (*base, state_key, "terminated", "finishedAt")),
                                message=(term.get("message"), (*base, state_key, "terminated", "message")),
                            )
                    if cs.get("name") in specs:
                        s_index, s = specs[cs.get("name")]
                        limit = s.get("resources", {}).get("limits", {}).get("memory")
                        if limit:
                            yield self.fact(
                                "limit",
                                **common,
                                memory=(
                                    limit,
                                    ("items", i, "spec", spec_key, s_index, "resources", "limits", "memory"),
                                ),
                            )
