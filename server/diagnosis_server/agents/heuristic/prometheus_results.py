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
from diagnosis_server.agents.heuristic.findings import Finding, Role
from diagnosis_server.agents.heuristic.observations import Binding, BindingError, Observation, label_number
from diagnosis_server.agents.heuristic.workloads import workload_of_pod

_SERVICE_LABELS = ("service", "app", "deployment", "job_name", "container", "job")
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
        pod = self.labels.get("pod")
        if pod:
            workload = workload_of_pod(pod)
            return workload, self.bind_label("pod", text=workload)
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


def _symptom(series: ResultSeries) -> Finding | None:
    family = sig.metric_family(series.name or series.labels.get("__query__", ""))
    if family not in (sig.ERROR, sig.LATENCY) or not series.ranged or len(series.samples) < 5:
        return None
    start = series.samples[: max(1, len(series.samples) // 5)]
    baseline = sum(s.value for s in start) / len(start)
    threshold = sig.THRESHOLDS[family]
    above = [s for s in series.samples if s.value > threshold.value(baseline)]
    owner = series.service()
    if len(above) < sig.MIN_ANOMALOUS_POINTS or owner is None:
        return None
    service, service_binding = owner
    first, peak = start[0], max(series.samples, key=lambda s: s.value)
    what = series.name or ("error rate" if family == sig.ERROR else "latency")
    bindings = [service_binding, series.bind_sample(first), series.bind_sample(peak)]
    if series.name:
        bindings.append(series.obs.bind("data", "result", series.index, "metric", "__name__"))
    return Finding(
        family, Role.SYMPTOM, service, f"{service} {what} rose from {first.text} to {peak.text}", tuple(bindings)
    )


def prometheus_findings(observations: Iterable[Observation], rules: Rules | None = None) -> list[Finding]:
    rules = rules or current_rules()
    out: list[Finding] = []
    seen: set[tuple[str, str, str]] = set()
    for series in result_series(observations):
        for analyzer in (lambda s: _reason_finding(s, rules), lambda s: _grown(s, rules), _unavailable, _symptom):
            try:
                finding = analyzer(series)
            except BindingError:
                continue
            if finding is not None and finding.key not in seen:
                seen.add(finding.key)
                out.append(finding)
    return out
