"""The built-in toolset: five read-only tools over one incident scenario pack.

Every output is a JSON object whose strings are copied verbatim from the pack, so a claim can bind to an
exact string by JSON Pointer (``/lines/3/message``, ``/events/0/reason``). Outputs are deterministic:
the same arguments over the same pack give the same output. No tool reads the pack's ``truth`` block.

Conventions shared by the tools:
- times are ISO 8601 UTC strings (``2024-11-29T13:51:36Z``); ``start``/``end`` are inclusive and default
  to the scenario's time window; a time without a zone is taken as UTC;
- records (log lines, deploys, events) come newest first; metric points come oldest first;
- an optional argument given as ``null`` counts as absent; anything else that breaks the input schema
  is a ``ToolError`` saying what is wrong.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, ClassVar, Literal, TypeVar

from diagnosis_server.conversions import JsonObject, JsonValue
from diagnosis_server.tools.arguments import Args, Param, check_arguments, input_schema
from diagnosis_server.tools.base import ToolError, Toolset
from diagnosis_server.tools.scenario import LOG_LEVELS, Deploy, K8sEvent, LogLine, Scenario

TOOL_NAMES = ("logs.search", "metrics.query", "deploys.list", "k8s.events", "topology.dependencies")
LOG_LIMIT_DEFAULT = 50
LOG_LIMIT_MAX = 200
BASELINE_FRACTION = 0.2


# ------------------------------------------------------------------------------------- arguments
def _param(name: str, kind: Literal["string", "integer"], description: str, **options: Any) -> Param:
    """A built-in tool's argument: strings are JSON strings, kept as given (``tools.arguments.Param``)."""
    return Param(name, kind, description, verbatim=True, **options)


def _parse_time(tool: str, field: str, text: str) -> datetime:
    try:
        ts = datetime.fromisoformat(text.strip())
        return ts.replace(tzinfo=UTC) if ts.tzinfo is None else ts.astimezone(UTC)
    except (ValueError, OverflowError):
        raise ToolError(f"{tool}: {field} {text!r} is not an ISO 8601 time (e.g. 2024-11-29T13:30:00Z)") from None


@lru_cache(maxsize=65536)
def format_ts(ts: datetime) -> str:
    """UTC, ``Z`` suffix, milliseconds only when present: the packs' own spelling.

    Cached: the packs' timestamps are a fixed set, formatted again on every tool call.
    """
    ts = ts.astimezone(UTC)
    if ts.microsecond:
        return f"{ts:%Y-%m-%dT%H:%M:%S}.{ts.microsecond // 1000:03d}Z"
    return f"{ts:%Y-%m-%dT%H:%M:%S}Z"


def _number(value: float) -> int | float:
    value = round(value, 6)
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


_START = _param(
    "start",
    "string",
    "Window start, ISO 8601 UTC (e.g. 2024-11-29T13:30:00Z). Default: the scenario's start.",
    time=True,
)
_END = _param("end", "string", "Window end, ISO 8601 UTC, inclusive. Default: the scenario's end.", time=True)


# ------------------------------------------------------------------------------------- the tools
class _ScenarioTool(ABC):
    NAME: ClassVar[str]
    DESCRIPTION: ClassVar[str]
    PARAMS: ClassVar[tuple[Param, ...]]

    def __init__(self, scenario: Scenario) -> None:
        self._scenario = scenario
        self._services = {s.name: s for s in scenario.topology.services}

    @property
    def name(self) -> str:
        return self.NAME

    @property
    def description(self) -> str:
        return self.DESCRIPTION

    @property
    def input_schema(self) -> JsonObject:
        return input_schema(self.PARAMS)

    async def call(self, arguments: JsonObject) -> JsonValue:
        return self.run(check_arguments(self.NAME, self.PARAMS, arguments))

    @abstractmethod
    def run(self, args: Args) -> JsonObject: ...

    # helpers ---------------------------------------------------------------------------------
    def _service(self, args: Args) -> str | None:
        name = args.get("service")
        if name is None:
            return None
        name = str(name)
        if name not in self._services:
            known = ", ".join(self._services)
            raise ToolError(f"{self.NAME}: unknown service {name!r}; services in this scenario: {known}")
        return name

    def _window(self, args: Args) -> tuple[datetime, datetime]:
        window = self._scenario.time_window
        start = _parse_time(self.NAME, "start", str(args["start"])) if "start" in args else window.start
        end = _parse_time(self.NAME, "end", str(args["end"])) if "end" in args else window.end
        if start > end:
            raise ToolError(f"{self.NAME}: start {format_ts(start)} is after end {format_ts(end)}")
        return start, end


def _window_json(start: datetime, end: datetime) -> JsonObject:
    return {"start": format_ts(start), "end": format_ts(end)}


_Record = TypeVar("_Record", bound=LogLine | Deploy | K8sEvent)


def _newest_first(records: Iterable[_Record]) -> list[_Record]:
    """Newest first; of records with one time, the later in the pack first."""
    return [record for _, record in sorted(enumerate(records), key=lambda x: (x[1].ts, x[0]), reverse=True)]


def _listing(key: str, start: datetime, end: datetime, records: Iterable[Deploy | K8sEvent]) -> JsonObject:
    """``{window, total, <key>: [...]}``: the records within the window, newest first, each as the pack has it
    (its time first, in the packs' spelling)."""
    listed: list[JsonValue] = [
        {"ts": format_ts(record.ts), **record.model_dump(exclude={"ts"})}
        for record in _newest_first(records)
        if start <= record.ts <= end
    ]
    return {"window": _window_json(start, end), "total": len(listed), key: listed}


class LogsSearch(_ScenarioTool):
    NAME = "logs.search"
    DESCRIPTION = (
        "Search one service's log lines in a time window. Returns {service, window, order, total_matches, returned, "
        "lines: [{ts, level, message}]}; lines are newest first, each message the raw log line (access logs, JSON "
        "app logs, stack-trace lines, database logs). Filters: query = case-insensitive substring of the message; "
        "level = this severity or worse (DEBUG < INFO < WARN < ERROR < FATAL). total_matches counts every match in "
        f"the window; at most limit (default {LOG_LIMIT_DEFAULT}, max {LOG_LIMIT_MAX}) newest lines are returned."
    )
    PARAMS = (
        _param("service", "string", "The service whose logs to search (a topology service name).", required=True),
        _param("query", "string", "Case-insensitive substring the message must contain (e.g. 'timeout', ' 502 ')."),
        _param("level", "string", "Minimum severity to return.", enum=LOG_LEVELS),
        _START,
        _END,
        _param(
            "limit",
            "integer",
            f"Most lines to return, newest first (default {LOG_LIMIT_DEFAULT}).",
            minimum=1,
            maximum=LOG_LIMIT_MAX,
        ),
    )

    def __init__(self, scenario: Scenario) -> None:
        super().__init__(scenario)
        # Per service, newest first: each line with its level's rank and its message lowered, made once (a
        # service may have thousands of lines, searched on every call).
        self._logs: dict[str, list[tuple[LogLine, int, str]]] = defaultdict(list)
        for line in _newest_first(scenario.logs):
            self._logs[line.service].append((line, LOG_LEVELS.index(line.level), line.message.lower()))

    def run(self, args: Args) -> JsonObject:
        service = self._service(args)
        assert service is not None
        start, end = self._window(args)
        query = str(args["query"]).lower() if "query" in args else None
        floor = LOG_LEVELS.index(str(args["level"])) if "level" in args else 0
        limit = int(args.get("limit", LOG_LIMIT_DEFAULT))
        matches = [
            line
            for line, rank, lowered in self._logs.get(service, [])
            if rank >= floor and start <= line.ts <= end and (query is None or query in lowered)
        ]
        lines: list[JsonValue] = [
            {"ts": format_ts(line.ts), "level": line.level, "message": line.message} for line in matches[:limit]
        ]
        return {
            "service": service,
            "window": _window_json(start, end),
            "order": "newest_first",
            "total_matches": len(matches),
            "returned": len(lines),
            "lines": lines,
        }


class MetricsQuery(_ScenarioTool):
    NAME = "metrics.query"
    DESCRIPTION = (
        "Read one metric series of one service in a time window. Returns {metric, service, unit, labels, window, "
        "points: [[ts, value]] oldest first, summary}. summary holds count, min, min_at, max, max_at, mean, p95 "
        "(nearest rank), first, last, and baseline_mean: the mean of the first 20% of the returned points (at least "
        "one), i.e. the start of the window, to compare the rest against. Metric names follow Prometheus style, e.g. "
        "http_requests_error_rate (ratio of 5xx), http_request_duration_p99_ms, container_memory_working_set_bytes "
        "(its limit label is the memory limit), container_cpu_usage_cores, kube_pod_container_status_restarts_total, "
        "db_connections_in_use, db_connections_max, disk_used_ratio, upstream_latency_p99_ms. An unknown metric is an "
        "error that lists the metrics the service has (topology.dependencies lists them too)."
    )
    PARAMS = (
        _param("metric", "string", "Metric name (e.g. http_requests_error_rate).", required=True),
        _param("service", "string", "The service the series belongs to (a topology service name).", required=True),
        _START,
        _END,
    )

    def __init__(self, scenario: Scenario) -> None:
        super().__init__(scenario)
        self._series = {(m.metric, m.service): m for m in scenario.metrics}

    def run(self, args: Args) -> JsonObject:
        service = self._service(args)
        assert service is not None
        metric = str(args["metric"]).strip()
        series = self._series.get((metric, service))
        if series is None:
            names = sorted(m for m, s in self._series if s == service)
            listing = ", ".join(names) if names else "none"
            raise ToolError(f"{self.NAME}: no metric {metric!r} for service {service!r}; its metrics: {listing}")
        start, end = self._window(args)
        points = [(ts, value) for ts, value in series.points if start <= ts <= end]
        return {
            "metric": series.metric,
            "service": service,
            "unit": series.unit,
            "labels": dict(series.labels),
            "window": _window_json(start, end),
            "points": [[format_ts(ts), _number(value)] for ts, value in points],
            "summary": _summary(points),
        }


def _summary(points: Sequence[tuple[datetime, float]]) -> JsonObject:
    if not points:
        keys = ("min", "min_at", "max", "max_at", "mean", "p95", "first", "last", "baseline_mean")
        return {"count": 0, **dict.fromkeys(keys)}
    values = [value for _, value in points]
    n = len(values)
    low = min(range(n), key=lambda i: values[i])
    high = max(range(n), key=lambda i: values[i])
    baseline = values[: max(1, math.ceil(n * BASELINE_FRACTION))]
    ordered = sorted(values)
    return {
        "count": n,
        "min": _number(values[low]),
        "min_at": format_ts(points[low][0]),
        "max": _number(values[high]),
        "max_at": format_ts(points[high][0]),
        "mean": _number(sum(values) / n),
        "p95": _number(ordered[max(0, math.ceil(0.95 * n) - 1)]),
        "first": _number(values[0]),
        "last": _number(values[-1]),
        "baseline_mean": _number(sum(baseline) / len(baseline)),
    }


class DeploysList(_ScenarioTool):
    NAME = "deploys.list"
    DESCRIPTION = (
        "List deploys (rollouts of a new version) in a time window, newest first, optionally of one service. Returns "
        "{window, total, deploys: [{ts, service, version, previous_version, author, summary}]}; ts is when the "
        "rollout started."
    )
    PARAMS = (_param("service", "string", "Only deploys of this service."), _START, _END)

    def run(self, args: Args) -> JsonObject:
        service = self._service(args)
        start, end = self._window(args)
        return _listing("deploys", start, end, (d for d in self._scenario.deploys if service in (None, d.service)))


class K8sEvents(_ScenarioTool):
    NAME = "k8s.events"
    DESCRIPTION = (
        "List Kubernetes events in a time window, newest first, optionally only those of one service's objects, of "
        "one namespace, or with one reason (exact, case-insensitive: e.g. OOMKilled, BackOff, Unhealthy, Killing, "
        "Scheduled, Pulled, FailedMount, SuccessfulRescale). Returns {window, total, events: [{ts, namespace, kind, "
        "object, reason, type, message, count, service}]}; ts is when the event was last seen, count how often it "
        "has been seen so far, service null for cluster objects such as nodes."
    )
    PARAMS = (
        _param("service", "string", "Only events of this service's objects (pods, deployments, autoscalers)."),
        _param("namespace", "string", "Only events in this namespace."),
        _param("reason", "string", "Only events with this reason (e.g. OOMKilled)."),
        _START,
        _END,
    )

    def __init__(self, scenario: Scenario) -> None:
        super().__init__(scenario)
        namespaces = {e.namespace for e in scenario.k8s_events}
        namespaces.update(s.labels["namespace"] for s in scenario.topology.services if "namespace" in s.labels)
        self._namespaces = sorted(namespaces)

    def run(self, args: Args) -> JsonObject:
        service = self._service(args)
        namespace = str(args["namespace"]) if "namespace" in args else None
        if namespace is not None and namespace not in self._namespaces:
            known = ", ".join(self._namespaces)
            raise ToolError(f"{self.NAME}: unknown namespace {namespace!r}; namespaces in this scenario: {known}")
        reason = str(args["reason"]).strip().lower() if "reason" in args else None
        start, end = self._window(args)

        def keep(e: K8sEvent) -> bool:
            return (
                (service is None or e.service == service)
                and (namespace is None or e.namespace == namespace)
                and (reason is None or e.reason.lower() == reason)
            )

        return _listing("events", start, end, (e for e in self._scenario.k8s_events if keep(e)))


class TopologyDependencies(_ScenarioTool):
    NAME = "topology.dependencies"
    DESCRIPTION = (
        "Describe one service: its kind (http, worker, database, cache, queue, external), labels, the services it "
        "calls (depends_on), the services that call it (dependents), and the metric names it has for metrics.query. "
        "Returns {service, kind, labels, depends_on, dependents, metrics}."
    )
    PARAMS = (_param("service", "string", "The service to describe (a topology service name).", required=True),)

    def run(self, args: Args) -> JsonObject:
        name = self._service(args)
        assert name is not None
        service = self._services[name]
        dependents: list[JsonValue] = [s.name for s in self._scenario.topology.services if name in s.depends_on]
        metrics: list[JsonValue] = [m for m in sorted({m.metric for m in self._scenario.metrics if m.service == name})]
        return {
            "service": name,
            "kind": service.kind,
            "labels": dict(service.labels),
            "depends_on": list(service.depends_on),
            "dependents": dependents,
            "metrics": metrics,
        }


# ------------------------------------------------------------------------------------- public
def builtin_toolset(scenario: Scenario) -> Toolset:
    """The five built-in tools over ``scenario``, in a stable order (``TOOL_NAMES``)."""
    return Toolset(
        [
            LogsSearch(scenario),
            MetricsQuery(scenario),
            DeploysList(scenario),
            K8sEvents(scenario),
            TopologyDependencies(scenario),
        ]
    )


def scenario_context(scenario: Scenario) -> JsonObject:
    """What a planner may know up front: the scenario's name, title, services and window; no data, no truth.

    Each service lists the metric names it has (sorted), like a monitoring system's metrics catalog: names
    only, never a value.
    """
    catalog: dict[str, set[str]] = defaultdict(set)
    for series in scenario.metrics:
        catalog[series.service].add(series.metric)
    services: list[JsonValue] = [
        {
            "name": s.name,
            "kind": s.kind,
            "depends_on": list(s.depends_on),
            "metrics": list[JsonValue](sorted(catalog.get(s.name, ()))),
        }
        for s in scenario.topology.services
    ]
    return {
        "scenario": scenario.name,
        "title": scenario.title,
        "services": services,
        "time_window": _window_json(scenario.time_window.start, scenario.time_window.end),
    }
