"""Prometheus analyzers: what ``prometheus.query`` and ``prometheus.query_range`` answered (the API's own
``data.result``), for kube-state-metrics series and for a service's error rate and latency.

- ``kube_pod_container_status_last_terminated_reason`` / ``..._terminated_reason`` / ``..._waiting_reason``
  with a value of 1: the container rule of that reason (``OOMKilled``, ``CrashLoopBackOff``, ...);
- ``kube_pod_container_status_restarts_total`` that grew by ``restarts_min`` or more: restarts (support);
- ``kube_deployment_status_replicas_unavailable`` above 0, ``kube_pod_status_ready{condition="false"}`` at 1:
  a symptom;
- a series whose name (or the query that produced it) reads as an error rate or a latency and that rose well
  above its own start: a symptom, stated with the two samples it rests on.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from diagnosis_server.agents.heuristic import signals as sig
from diagnosis_server.agents.heuristic.analyzers.rules import Rules, current_rules
from diagnosis_server.agents.heuristic.findings import HEALTHY_MARK, Finding, Role
from diagnosis_server.agents.heuristic.observations import Binding, BindingError, Observation, label_number
from diagnosis_server.agents.heuristic.workloads import workload_of_pod

_SERVICE_LABELS = ("service", "app", "application", "deployment", "job_name", "service_name")
_WORKLOAD_LABELS = ("pod", "instance")
_STATUS_LABELS = ("status", "code", "status_code", "http_status")
_PAIRS = (
    ("db_connections_in_use", "db_connections_max", "db_exhausted", Role.CAUSE, 3),
    ("pg_stat_activity_count", "pg_settings_max_connections", "db_exhausted", Role.CAUSE, 3),
    ("mysql_global_status_threads_connected", "mysql_global_variables_max_connections", "db_exhausted", Role.CAUSE, 3),
    # pgbouncer-exporter: clients of a pool against max_client_conn (the pooler refuses past it).
    (
        "pgbouncer_pools_client_active_connections",
        "pgbouncer_config_max_client_connections",
        "db_exhausted",
        Role.CAUSE,
        3,
    ),
    ("pgbouncer_pools_client_waiting_connections", "", "app_pool_waiting", Role.SUPPORT, 0),
    ("hikaricp_connections_active", "hikaricp_connections_max", "app_pool_full", Role.SUPPORT, 0),
    ("hikaricp_connections_pending", "", "app_pool_waiting", Role.SUPPORT, 0),
)
# The series the pairs read, for a planner that knows the metric names.
PAIR_NAMES = frozenset(name for used, limit, *_ in _PAIRS for name in (used, limit) if name)
_REASON_STATES = {
    "kube_pod_container_status_last_terminated_reason": "last_terminated",
    "kube_pod_container_status_terminated_reason": "terminated",
    "kube_pod_container_status_waiting_reason": "waiting",
}


@dataclass(frozen=True, slots=True)
class Sample:
    index: int
    ts: float
    value: float
    text: str


@dataclass(frozen=True, slots=True)
class ResultSeries:
    obs: Observation
    index: int
    labels: dict[str, str]
    samples: tuple[Sample, ...]
    # True for a range query's matrix (values), False for an instant vector (value).
    ranged: bool

    @property
    def name(self) -> str:
        return self.labels.get("__name__", "")

    def bind_label(self, key: str, text: str | None = None) -> Binding:
        return self.obs.bind("data", "result", self.index, "metric", key, text=text)

    def bind_sample(self, sample: Sample) -> Binding:
        if self.ranged:
            return self.obs.bind("data", "result", self.index, "values", sample.index, 1)
        return self.obs.bind("data", "result", self.index, "value", 1)

    def service(self) -> tuple[str, Binding] | None:
        for key in _SERVICE_LABELS:
            value = self.labels.get(key)
            if value:
                return value, self.bind_label(key)
        for key in _WORKLOAD_LABELS:
            pod = self.labels.get(key)
            if pod and not pod[:1].isdigit():
                workload = workload_of_pod(pod.split(":")[0])
                return workload, self.bind_label(key, text=workload)
        job = self.labels.get("job") or self.labels.get("container")
        if job and job not in ("kube-state-metrics", "kubelet", "node-exporter", "postgres-exporter", "app"):
            key = "job" if self.labels.get("job") else "container"
            return job, self.bind_label(key)
        return None


def _samples(raw: object) -> list[tuple[int, float, float, str]]:
    out: list[tuple[int, float, float, str]] = []
    for index, pair in enumerate(raw if isinstance(raw, list) else []):
        if isinstance(pair, list) and len(pair) == 2 and isinstance(pair[1], str):
            ts, value = label_number(pair[0]), label_number(pair[1])
            if ts is not None and value is not None:
                out.append((index, ts, value, pair[1]))
    return out


def result_series(observations: Iterable[Observation]) -> list[ResultSeries]:
    out: list[ResultSeries] = []
    for obs in observations:
        if obs.tool_name not in ("prometheus.query", "prometheus.query_range"):
            continue
        result = obs.get("data", "result")
        for index, item in enumerate(result if isinstance(result, list) else []):
            metric = item.get("metric") if isinstance(item, dict) else None
            if not isinstance(item, dict) or not isinstance(metric, dict):
                continue
            labels = {str(k): str(v) for k, v in metric.items() if isinstance(v, str)}
            if not labels.get("__name__"):
                query = obs.arguments.get("query")
                if isinstance(query, str):
                    labels = {**labels, "__query__": query}
            ranged = "values" in item
            raw = item.get("values") if ranged else [item.get("value")]
            samples = tuple(Sample(i, ts, value, text) for i, ts, value, text in _samples(raw))
            if samples:
                out.append(ResultSeries(obs, index, labels, samples, ranged))
    return out


def _reason_finding(series: ResultSeries, rules: Rules) -> Finding | None:
    state = _REASON_STATES.get(series.name)
    reason = series.labels.get("reason", "")
    if state is None or not reason or max(s.value for s in series.samples) < 1:
        return None
    rule = next((r for r in rules.container if r.state == state and reason in r.reasons), None)
    owner = series.service()
    if rule is None or owner is None:
        return None
    service, service_binding = owner
    sample = next(s for s in series.samples if s.value >= 1)
    bindings = [
        service_binding,
        series.obs.bind("data", "result", series.index, "metric", "__name__"),
        series.bind_label("reason"),
        series.bind_sample(sample),
    ]
    detail = f"{series.name} reason {reason} at {sample.text}"
    pod = series.labels.get("pod")
    if pod and pod != service:
        bindings.append(series.bind_label("pod"))
        detail += f" for pod {pod}"
    return Finding(
        rule.kind,
        rule.role_value,
        service,
        f"{service} {rule.phrase} ({detail})",
        tuple(bindings),
        strength=rule.strength,
        detail=reason,
    )


def _grown(series: ResultSeries, rules: Rules) -> Finding | None:
    if series.name != "kube_pod_container_status_restarts_total" or len(series.samples) < 2:
        return None
    first, last = series.samples[0], max(series.samples, key=lambda s: s.value)
    owner = series.service()
    if owner is None or last.value - first.value < rules.thresholds.restarts_min:
        return None
    service, service_binding = owner
    statement = f"{service} {series.name} rose from {first.text} to {last.text}"
    bindings = (
        service_binding,
        series.obs.bind("data", "result", series.index, "metric", "__name__"),
        series.bind_sample(first),
        series.bind_sample(last),
    )
    return Finding("restarts", Role.SUPPORT, service, statement, bindings)


def _unavailable(series: ResultSeries) -> Finding | None:
    name = series.name
    wanted = name == "kube_deployment_status_replicas_unavailable" or (
        name == "kube_pod_status_ready" and series.labels.get("condition") == "false"
    )
    high = max(series.samples, key=lambda s: s.value)
    owner = series.service()
    if not wanted or high.value <= 0 or owner is None:
        return None
    service, service_binding = owner
    bindings = (
        service_binding,
        series.obs.bind("data", "result", series.index, "metric", "__name__"),
        series.bind_sample(high),
    )
    return Finding("not_ready", Role.SYMPTOM, service, f"{service} {name} reached {high.text}", bindings)


def _family(series: ResultSeries) -> str:
    """What the series measures: its name, else the query that produced it (``rate(...{code=~"5.."}[5m])`` reads
    as an error rate, ``histogram_quantile(...)`` as a latency)."""
    query = series.labels.get("__query__", "").lower()
    if not series.name and query:
        if "histogram_quantile" in query:
            return sig.LATENCY
        if any(f'{key}=~"5' in query.replace(" ", "") for key in _STATUS_LABELS):
            return sig.ERROR
    family = sig.metric_family(series.name or query)
    return sig.OTHER if _is_counter(series.name) else family


def _is_counter(name: str) -> bool:
    """A raw counter or histogram part: its value only grows, so "rose" says nothing about a rate."""
    return name.endswith(("_total", "_count", "_sum", "_bucket"))


def _threshold(series: ResultSeries, family: str) -> sig.Threshold:
    threshold = sig.THRESHOLDS[family]
    where = (series.name or series.labels.get("__query__", "")).lower()
    if family == sig.LATENCY and ("seconds" in where or where.endswith("_s")):
        # Prometheus' base unit: the delta is in seconds, not milliseconds.
        return sig.Threshold(threshold.factor, threshold.delta / 1000)
    return threshold


def _symptom(series: ResultSeries) -> Finding | None:
    """An error rate or latency over a range: a symptom when it rose well above its own start, else a headline
    signal that stayed within its baseline (R-AN-2: healthy is evidence too)."""
    family = _family(series)
    if family not in (sig.ERROR, sig.LATENCY) or not series.ranged or len(series.samples) < 5:
        return None
    # The series' quiet level: the lowest of its first fifth (a window may open just before the rise).
    start = series.samples[: max(1, len(series.samples) // 5)]
    baseline = min(s.value for s in start)
    above = [s for s in series.samples if s.value > _threshold(series, family).value(baseline)]
    owner = series.service()
    if owner is None:
        return None
    service, service_binding = owner
    first, peak = start[0], max(series.samples, key=lambda s: s.value)
    what = series.name or ("error rate" if family == sig.ERROR else "latency")
    bindings = [service_binding, series.bind_sample(first), series.bind_sample(peak)]
    if series.name:
        bindings.append(series.obs.bind("data", "result", series.index, "metric", "__name__"))
    if len(above) < sig.MIN_ANOMALOUS_POINTS:
        statement = f"{service} {what} {HEALTHY_MARK} (peak {peak.text}, first sample {first.text})"
        return Finding("within_baseline", Role.HEALTHY, service, statement, tuple(bindings))
    onset = above[0]
    if onset.index != peak.index and onset.index != first.index:
        bindings.append(series.bind_sample(onset))
    statement = f"{service} {what} rose from {first.text} to {peak.text}"
    return Finding(family, Role.SYMPTOM, service, statement, tuple(bindings))


def _pairs(series: list[ResultSeries], rules: Rules) -> list[Finding]:
    """Connections in use against their maximum, across two series of the same service: a database at its limit
    is a cause; a client pool at its size, or callers waiting on it, support."""
    by_name: dict[tuple[str, str], ResultSeries] = {}
    for s in series:
        owner = s.service()
        if owner is not None and s.name:
            by_name.setdefault((owner[0], s.name), s)
    out: list[Finding] = []
    for (service, name), used in by_name.items():
        for used_name, max_name, kind, role, strength in _PAIRS:
            if name != used_name:
                continue
            peak = max(used.samples, key=lambda s: s.value)
            owner = used.service()
            assert owner is not None
            bindings = [
                owner[1],
                used.obs.bind("data", "result", used.index, "metric", "__name__"),
                used.bind_sample(peak),
            ]
            if not max_name:
                if peak.value >= 1:
                    statement = f"{service} {used_name} reached {peak.text}"
                    out.append(Finding(kind, role, service, statement, tuple(bindings), strength=strength))
                continue
            cap = by_name.get((service, max_name))
            if cap is None:
                continue
            limit = max(cap.samples, key=lambda s: s.value)
            if limit.value <= 0:
                continue
            bindings += [cap.obs.bind("data", "result", cap.index, "metric", "__name__"), cap.bind_sample(limit)]
            against = f"{used_name} reached {peak.text} against {max_name} {limit.text}"
            if peak.value >= rules.thresholds.db_connections_full * limit.value:
                what = "connections are exhausted" if kind == "db_exhausted" else "connection pool is full"
                out.append(
                    Finding(kind, role, service, f"{service} {what} ({against})", tuple(bindings), strength=strength)
                )
            elif kind == "db_exhausted":
                statement = f"{service} {used_name} {HEALTHY_MARK} (peak {peak.text} against {max_name} {limit.text})"
                out.append(Finding("within_baseline", Role.HEALTHY, service, statement, tuple(bindings)))
    return out


def prometheus_findings(observations: Iterable[Observation], rules: Rules | None = None) -> list[Finding]:
    rules = rules or current_rules()
    out: list[Finding] = []
    seen: set[tuple[str, str, str]] = set()
    all_series = result_series(observations)
    for series in all_series:
        for analyzer in (lambda s: _reason_finding(s, rules), lambda s: _grown(s, rules), _unavailable, _symptom):
            try:
                finding = analyzer(series)
            except BindingError:
                continue
            if finding is not None and finding.key not in seen:
                seen.add(finding.key)
                out.append(finding)
    try:
        pairs = _pairs(all_series, rules)
    except BindingError:
        pairs = []
    out += [f for f in pairs if f.key not in seen]
    return out
