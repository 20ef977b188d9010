"""Recorded packs answering the live tools' names in the live shapes, where their data allows.

A pack's toolset (``pack_toolset``) is the five built-in tools plus, when the pack has the data:
- ``prometheus.query`` / ``prometheus.query_range`` over its series (``prometheus.series``, and its ``metrics``
  as series labelled ``__name__``, ``service`` and their own labels), answering plain series selectors;
- ``loki.query_range`` over its streams (``loki.streams``, and its ``logs`` as streams labelled ``service`` and
  ``level``), answering a stream selector with line filters;
- ``kubernetes.pods``, ``kubernetes.events`` (raw events, and ``k8s_events`` as core/v1 Events),
  ``kubernetes.pod_logs`` and ``kubernetes.rollouts`` over its raw objects, with label and field selectors;
- ``kubernetes.list`` / ``kubernetes.get`` over its objects of every kind (``pack_objects``).

Bodies are shaped as the upstream's (``status``/``data`` of Prometheus and Loki, Kubernetes List objects) and go
through the same redaction as live answers, so an agent plans and binds the same way on a recorded incident and
on a live environment. "now" is the end of the pack's time window.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cached_property
from typing import Any

from diagnosis_server.conversions import JsonObject, JsonValue
from diagnosis_server.sources import kubernetes as k8s
from diagnosis_server.sources import loki, prometheus
from diagnosis_server.sources.arguments import Args, parse_time
from diagnosis_server.sources.declared import Declaration, DeclaredTool
from diagnosis_server.sources.k8s_kinds import CONTROL_PLANE_NAMESPACE
from diagnosis_server.sources.pack_objects import PackObjects, pack_object_tools
from diagnosis_server.sources.redaction import Redactor
from diagnosis_server.sources.selectors import (
    Matcher,
    field_terms,
    field_test,
    label_selector,
    logql_query,
    promql_selector,
)
from diagnosis_server.tools.base import Tool, ToolError, Toolset
from diagnosis_server.tools.builtin import builtin_toolset, format_ts, scenario_context
from diagnosis_server.tools.scenario import CLUSTER_SCOPED, RAW_KINDS, Scenario

LOOKBACK_S = 300.0
_LEVELS = {"DEBUG": "debug", "INFO": "info", "WARN": "warn", "ERROR": "error", "FATAL": "fatal"}


def _number(seconds: float) -> int | float:
    return int(seconds) if float(seconds).is_integer() else round(seconds, 3)


def _sample(value: float) -> str:
    return str(int(value)) if float(value).is_integer() and abs(value) < 2**53 else repr(value)


# ------------------------------------------------------------------------------------------- data


def pack_series(scenario: Scenario) -> list[tuple[dict[str, str], list[tuple[float, str]]]]:
    """Every series of the pack: its raw ``prometheus.series`` and its ``metrics`` in Prometheus's terms, each
    series' samples in time order (as Prometheus stores them)."""
    out = [
        (dict(s.metric), sorted(((t, v) for t, v in s.values), key=_sample_time)) for s in scenario.prometheus.series
    ]
    for m in scenario.metrics:
        labels = {**m.labels, "__name__": m.metric, "service": m.service}
        out.append((labels, sorted(((ts.timestamp(), _sample(value)) for ts, value in m.points), key=_sample_time)))
    return out


def pack_metric_names(scenario: Scenario) -> set[str]:
    """The names of ``pack_series``, read without making its points."""
    names = {s.metric.get("__name__", "") for s in scenario.prometheus.series}
    names.update(m.metric for m in scenario.metrics)
    names.discard("")
    return names


def pack_streams(scenario: Scenario) -> list[tuple[dict[str, str], list[tuple[int, str]]]]:
    """Every log stream of the pack: its raw ``loki.streams`` and its ``logs`` by (service, level)."""
    out = [(dict(s.stream), [(int(ns), line) for ns, line in s.values]) for s in scenario.loki.streams]
    grouped: dict[tuple[str, str], list[tuple[int, str]]] = defaultdict(list)
    for line in scenario.logs:
        grouped[(line.service, _LEVELS[line.level])].append((int(line.ts.timestamp() * 1e9), line.message))
    out += [({"service": service, "level": level}, values) for (service, level), values in grouped.items()]
    return out


def pack_events(scenario: Scenario) -> list[JsonObject]:
    """The pack's raw events, then its ``k8s_events`` as core/v1 Event objects."""
    events: list[JsonObject] = [dict(e) for e in scenario.kubernetes.events]
    for i, e in enumerate(scenario.k8s_events):
        seen = format_ts(e.ts)
        events.append(
            {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"name": f"{e.object}.{i:016x}", "namespace": e.namespace, "creationTimestamp": seen},
                "involvedObject": {"kind": e.kind, "name": e.object, "namespace": e.namespace},
                "reason": e.reason,
                "message": e.message,
                "type": e.type,
                "count": e.count,
                "firstTimestamp": seen,
                "lastTimestamp": seen,
                "source": {"component": "recorded-incident"},
            }
        )
    return events


class PackData:
    """A pack's data in the live tools' terms, each part made once (the pack does not change) when a tool first
    reads it. Kubernetes objects are kept as (object, its redacted form): a selector reads the object as the API
    server would, the answer holds the redacted form, redacted once."""

    def __init__(self, scenario: Scenario, redactor: Redactor) -> None:
        self.scenario = scenario
        self.redactor = redactor
        self._field_index: dict[tuple[str, str], dict[str, list[tuple[JsonObject, JsonValue]]]] = {}

    @cached_property
    def series(self) -> list[tuple[dict[str, str], list[tuple[float, str]]]]:
        return pack_series(self.scenario)

    @cached_property
    def redacted_series(self) -> list[tuple[dict[str, str], list[tuple[float, str]]]]:
        """``series`` as an answer holds them (label values and sample texts redacted), in the same order: a
        selector reads ``series``, the answer takes the same index from here, redacted once per pack."""
        text = self.redactor.text
        return [
            ({k: text(v) for k, v in labels.items()}, [(ts, text(value)) for ts, value in values])
            for labels, values in self.series
        ]

    @cached_property
    def streams(self) -> list[tuple[dict[str, str], list[tuple[int, str]]]]:
        return pack_streams(self.scenario)

    @cached_property
    def redacted_streams(self) -> list[tuple[dict[str, str], list[str]]]:
        """Each stream's labels and lines as an answer holds them, in ``streams``' order (line filters read the
        lines as recorded, as Loki does; the answer holds them redacted)."""
        text = self.redactor.text
        return [
            ({k: text(v) for k, v in labels.items()}, [text(line) for _, line in values])
            for labels, values in self.streams
        ]

    @cached_property
    def pods(self) -> list[tuple[JsonObject, JsonValue]]:
        return self._redacted(dict(p) for p in self.scenario.kubernetes.pods)

    @cached_property
    def events(self) -> list[tuple[JsonObject, JsonValue]]:
        return self._redacted(pack_events(self.scenario))

    @cached_property
    def replicasets(self) -> list[tuple[JsonObject, JsonValue]]:
        return self._redacted(dict(r) for r in self.scenario.kubernetes.replicasets)

    def raw_objects(self, plural: str) -> list[JsonObject]:
        """The pack's objects of one kind by its API plural name (events with ``k8s_events`` as Events)."""
        if plural == "events":
            return pack_events(self.scenario)
        if plural == "pods":
            return [dict(p) for p in self.scenario.kubernetes.pods]
        return [dict(o) for o in getattr(self.scenario.kubernetes, plural, ())]

    def _redacted(self, objects: Iterable[JsonObject]) -> list[tuple[JsonObject, JsonValue]]:
        return [(obj, self.redactor.kubernetes(obj)) for obj in objects]

    def by_field(
        self, kind: str, objects: Sequence[tuple[JsonObject, JsonValue]], key: str, getter: Callable[[JsonObject], str]
    ) -> dict[str, list[tuple[JsonObject, JsonValue]]]:
        """The pack's objects of ``kind`` by the value of one field, each list in the objects' order; made once per
        (kind, field), as an API server's index answers ``type=Warning`` without reading every event."""
        found = self._field_index.get((kind, key))
        if found is None:
            found = defaultdict(list)
            for pair in objects:
                found[getter(pair[0])].append(pair)
            self._field_index[(kind, key)] = found
        return found


# ------------------------------------------------------------------------------------------- tools


class _PackTool(DeclaredTool):
    def __init__(self, data: PackData) -> None:
        self._data = data
        self._now = data.scenario.time_window.end.timestamp()
        self._start = data.scenario.time_window.start.timestamp()

    async def call(self, arguments: JsonObject) -> JsonValue:
        return self._data.redactor.value(self.answer(self._args(arguments)))

    def answer(self, args: Args) -> JsonValue:
        raise NotImplementedError

    def _windowed(self, args: Args) -> Args:
        """``args`` over the pack's whole time window when they give neither start nor end."""
        if "start" not in args and "end" not in args:
            return {**args, "start": str(self._start), "end": str(self._now)}
        return args


def _success(result_type: str, result: list[JsonValue]) -> JsonValue:
    """A Prometheus or Loki API answer's body."""
    return {"status": "success", "data": {"resultType": result_type, "result": result}}


def _select(series: Iterable[tuple[dict[str, str], list[Any]]], matchers: list[Matcher]) -> list[int]:
    """The indexes of the series (or streams) whose labels every matcher matches."""
    return [index for index, (labels, _) in enumerate(series) if all(m.matches(labels) for m in matchers)]


def _at(values: list[tuple[float, str]], moment: float) -> str | None:
    """The latest sample at or before ``moment`` within the lookback (Prometheus's instant semantics); ``values``
    are in time order."""
    index = bisect_right(values, moment, key=_sample_time)
    if index == 0:
        return None
    ts, value = values[index - 1]
    return value if moment - ts <= LOOKBACK_S else None


def _sample_time(sample: tuple[float, str]) -> float:
    return sample[0]


def _range(values: list[tuple[float, str]], start: float, end: float, step: float) -> list[JsonValue]:
    """The range query's points of one series: at each step from ``start`` to ``end``, ``_at``'s sample. The
    moments rise, so one walk over ``values`` finds them all (``_at`` would search from the start each time)."""
    points: list[JsonValue] = []
    count = len(values)
    index = bisect_right(values, start, key=_sample_time)  # the first sample after the first moment
    moment = start
    while moment <= end + 1e-9:
        while index < count and values[index][0] <= moment:
            index += 1
        if index:
            ts, value = values[index - 1]
            if moment - ts <= LOOKBACK_S:
                points.append([_number(moment), value])
        moment += step
    return points


class _PackAnswerTool(_PackTool):
    """A Prometheus or Loki tool over the pack's series or streams: its answer is made of the pack's data
    redacted once (``PackData.redacted_series``, ``redacted_streams``) and of numbers, so it holds nothing left
    to redact."""

    async def call(self, arguments: JsonObject) -> JsonValue:
        return self.answer(self._args(arguments))


class PackPrometheusQuery(_PackAnswerTool):
    declaration = prometheus.QUERY_DECLARATION

    def answer(self, args: Args) -> JsonValue:
        matchers = promql_selector(self.name, str(args["query"]))
        moment = parse_time(self.name, "time", str(args["time"]), now=self._now) if "time" in args else self._now
        redacted = self._data.redacted_series
        result: list[JsonValue] = []
        for index in _select(self._data.series, matchers):
            labels, values = redacted[index]
            value = _at(values, moment)
            if value is not None:
                result.append({"metric": dict(labels), "value": [_number(moment), value]})
        return _success("vector", result)


class PackPrometheusQueryRange(_PackAnswerTool):
    declaration = prometheus.QUERY_RANGE_DECLARATION

    def answer(self, args: Args) -> JsonValue:
        matchers = promql_selector(self.name, str(args["query"]))
        start, end, step = prometheus.range_arguments(self.name, self._windowed(args), now=self._now)
        redacted = self._data.redacted_series
        result: list[JsonValue] = []
        for index in _select(self._data.series, matchers):
            labels, values = redacted[index]
            points = _range(values, start, end, step)
            if points:
                result.append({"metric": dict(labels), "values": points})
        return _success("matrix", result)


class PackLokiQueryRange(_PackAnswerTool):
    declaration = loki.DECLARATION

    def answer(self, args: Args) -> JsonValue:
        query = logql_query(self.name, str(args["query"]))
        args = self._windowed(args)
        start, end = loki.window(args, now=self._now)
        low, high = int(start * 1e9), int(end * 1e9)
        backward = args.get("direction", "backward") == "backward"
        streams, redacted = self._data.streams, self._data.redacted_streams
        entries: list[tuple[int, int, int]] = []
        for index in _select(streams, query.matchers):
            entries += [
                (ns, index, at)
                for at, (ns, line) in enumerate(streams[index][1])
                if low <= ns <= high and query.keeps(line)
            ]
        entries.sort(key=lambda e: (e[0], e[1]), reverse=backward)
        kept = entries[: int(args.get("limit", loki.DEFAULT_LIMIT))]
        chosen: dict[int, list[JsonValue]] = {}
        for ns, index, at in kept:
            chosen.setdefault(index, []).append([str(ns), redacted[index][1][at]])
        result: list[JsonValue] = [
            {"stream": dict(redacted[index][0]), "values": values} for index, values in chosen.items()
        ]
        return _success("streams", result)


def _path(*keys: str) -> Callable[[Mapping[str, object]], str]:
    def get(obj: Mapping[str, object]) -> str:
        value: object = obj
        for key in keys:
            value = value.get(key) if isinstance(value, dict) else None
        return "" if value is None else str(value)

    return get


_POD_FIELDS = {
    "metadata.name": _path("metadata", "name"),
    "metadata.namespace": _path("metadata", "namespace"),
    "status.phase": _path("status", "phase"),
    "spec.nodeName": _path("spec", "nodeName"),
}
_EVENT_FIELDS = {
    "metadata.name": _path("metadata", "name"),
    "metadata.namespace": _path("metadata", "namespace"),
    "involvedObject.kind": _path("involvedObject", "kind"),
    "involvedObject.name": _path("involvedObject", "name"),
    "involvedObject.namespace": _path("involvedObject", "namespace"),
    "reason": _path("reason"),
    "type": _path("type"),
}


class _PackKubernetesTool(_PackTool):
    kind: str = ""

    def __init__(self, data: PackData, namespaces: tuple[str, ...], declaration: Declaration) -> None:
        super().__init__(data)
        self._namespaces = namespaces
        self.declaration = declaration

    def _namespace(self, args: Args) -> str:
        namespace = str(args.get("namespace", self._namespaces[0]))
        if namespace not in self._namespaces:
            raise ToolError(
                f"{self.name}: namespace {namespace!r} is not in this incident ({', '.join(self._namespaces)})"
            )
        return namespace

    async def call(self, arguments: JsonObject) -> JsonValue:
        # The objects a listing holds are redacted already (``PackData``); a listing's envelope holds nothing to.
        return self.answer(self._args(arguments))

    def _listing(
        self, kind: str, objects: Sequence[tuple[JsonObject, JsonValue]], args: Args, fields: Any
    ) -> JsonObject:
        namespace = self._namespace(args)
        labels = label_selector(self.name, str(args["label_selector"])) if "label_selector" in args else None
        by_field = None
        if "field_selector" in args:
            terms = field_terms(self.name, str(args["field_selector"]), fields)
            by_field = field_test(terms, fields)
            # The most selective equality term picks the candidates from an index; the whole selector decides.
            candidates = [
                self._data.by_field(kind, objects, key, fields[key]).get(value, [])
                for key, value, equal in terms
                if equal
            ]
            if candidates:
                objects = min(candidates, key=len)
        items: list[JsonValue] = []
        for obj, redacted in objects:
            metadata = obj.get("metadata")
            if not isinstance(metadata, dict) or metadata.get("namespace") != namespace:
                continue
            own = metadata.get("labels")
            if labels is not None and not labels(
                {str(k): str(v) for k, v in own.items()} if isinstance(own, dict) else {}
            ):
                continue
            if by_field is not None and not by_field(obj):
                continue
            items.append(redacted)
        api_version = "apps/v1" if kind == "ReplicaSet" else "v1"
        return {"apiVersion": api_version, "kind": f"{kind}List", "metadata": {"resourceVersion": ""}, "items": items}


class PackPods(_PackKubernetesTool):
    def answer(self, args: Args) -> JsonValue:
        return self._listing("Pod", self._data.pods, args, _POD_FIELDS)


class PackEvents(_PackKubernetesTool):
    def answer(self, args: Args) -> JsonValue:
        return self._listing("Event", self._data.events, args, _EVENT_FIELDS)


class PackPodLogs(_PackKubernetesTool):
    async def call(self, arguments: JsonObject) -> JsonValue:
        return self._data.redactor.kubernetes(self.answer(self._args(arguments)))

    def answer(self, args: Args) -> JsonValue:
        namespace = self._namespace(args)
        pod, container = str(args["pod"]), args.get("container")
        previous = bool(args.get("previous", False))
        logs = [log for log in self._data.scenario.kubernetes.pod_logs if log.namespace == namespace and log.pod == pod]
        if not logs:
            raise ToolError(f'{self.name}: 404 NotFound: pods "{pod}" not found')
        containers = sorted({log.container or "" for log in logs})
        if container is None and len(containers) > 1:
            raise ToolError(
                f"{self.name}: 400 BadRequest: a container name must be specified for pod {pod}, "
                f"choose one of: [{' '.join(containers)}]"
            )
        chosen = [log for log in logs if (container is None or log.container == container) and log.previous == previous]
        if not chosen:
            which = "previous terminated container" if previous else "container"
            raise ToolError(
                f'{self.name}: 400 BadRequest: {which} "{container or containers[0]}" in pod "{pod}" not found'
            )
        lines: list[JsonValue] = list(chosen[0].lines)
        if "tail_lines" in args:
            lines = lines[-int(args["tail_lines"]) :]
        return {
            "namespace": namespace,
            "pod": pod,
            "container": str(container) if container is not None else None,
            "previous": previous,
            "lines": lines,
        }


class PackRollouts(_PackKubernetesTool):
    def answer(self, args: Args) -> JsonValue:
        namespace = self._namespace(args)
        name = str(args["deployment"])
        deployment = next(
            (
                d
                for d in self._data.scenario.kubernetes.deployments
                if d["metadata"].get("name") == name and d["metadata"].get("namespace") == namespace
            ),
            None,
        )
        if deployment is None:
            raise ToolError(f'{self.name}: 404 NotFound: deployments.apps "{name}" not found')
        selector = k8s.match_labels_selector((deployment.get("spec") or {}).get("selector"))
        uid = str(deployment["metadata"].get("uid") or "")
        owned = [(obj, redacted) for obj, redacted in self._data.replicasets if not uid or k8s.owned_by(obj, uid)]
        return self._listing("ReplicaSet", owned, {"namespace": namespace, "label_selector": selector}, {})


def _namespaces(scenario: Scenario) -> tuple[str, ...]:
    found: list[str] = []
    raw = scenario.kubernetes
    for plural in RAW_KINDS:
        if plural not in CLUSTER_SCOPED:
            found += [str(obj["metadata"]["namespace"]) for obj in getattr(raw, plural)]
    found += [log.namespace for log in raw.pod_logs] + [e.namespace for e in scenario.k8s_events]
    found += [s.labels["namespace"] for s in scenario.topology.services if "namespace" in s.labels]
    # The control plane's namespace is never the default one: the incident's namespaces come first.
    found.sort(key=lambda namespace: namespace == CONTROL_PLANE_NAMESPACE)
    return tuple(dict.fromkeys(found))


def pack_tools(scenario: Scenario, redactor: Redactor | None = None) -> list[Tool]:
    """The live tools this pack's data can answer (none of the five built-in ones)."""
    data = PackData(scenario, redactor or Redactor())
    tools: list[Tool] = []
    if scenario.prometheus.series or scenario.metrics:
        tools += [PackPrometheusQuery(data), PackPrometheusQueryRange(data)]
    if scenario.loki.streams or scenario.logs:
        tools.append(PackLokiQueryRange(data))
    namespaces = _namespaces(scenario)
    if namespaces:
        raw = scenario.kubernetes
        present = {
            k8s.PODS: (PackPods, bool(raw.pods)),
            k8s.EVENTS: (PackEvents, bool(raw.events or scenario.k8s_events)),
            k8s.POD_LOGS: (PackPodLogs, bool(raw.pod_logs)),
            k8s.ROLLOUTS: (PackRollouts, bool(raw.deployments and raw.replicasets)),
        }
        for name, declaration in k8s.declarations(namespaces, namespaces[0]).items():
            cls, has_data = present[name]
            if has_data:
                tools.append(cls(data, namespaces, declaration))
        tools += pack_object_tools(PackObjects(data.raw_objects, data.redactor.kubernetes), namespaces)
    return tools


def pack_context(scenario: Scenario) -> JsonObject:
    """What a planner may know of a pack up front: the built-in tools' context, the namespaces its Kubernetes
    tools answer, the metric names its Prometheus holds, and that its data is recorded (a query the recorded tools
    cannot answer is not planned)."""
    context = scenario_context(scenario)
    namespaces = _namespaces(scenario)
    if namespaces:
        context["kubernetes"] = {"namespaces": list[JsonValue](namespaces), "default_namespace": namespaces[0]}
    names = sorted(pack_metric_names(scenario))
    if names:
        # What /api/v1/label/__name__/values would list: the series a planner may ask for by name.
        context["prometheus"] = {"metric_names": list[JsonValue](names)}
    context["recorded"] = True
    context["now"] = format_ts(scenario.time_window.end)
    return context


def pack_toolset(scenario: Scenario) -> Toolset:
    """The five built-in tools (unchanged) and the live tools the pack's data can answer."""
    return Toolset([*builtin_toolset(scenario).as_mapping().values(), *pack_tools(scenario)])
