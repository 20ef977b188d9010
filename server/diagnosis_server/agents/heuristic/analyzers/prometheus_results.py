"""Prometheus analyzers: what ``prometheus.query`` and ``prometheus.query_range`` answered (the API's own
``data.result``), for kube-state-metrics series and for a service's error rate and latency.

- ``kube_pod_container_status_last_terminated_reason`` / ``..._terminated_reason`` / ``..._waiting_reason``, their
  ``kube_pod_init_container_status_...`` twins and ``kube_pod_status_reason``
  with a value of 1: the container rule of that reason (``OOMKilled``, ``CrashLoopBackOff``, ...); a last
  termination of a pod whose restart counter stayed flat over the window is older than it: support at most;
- ``kube_pod_container_status_restarts_total`` that grew by ``restarts_min`` or more: restarts (support);
- ``kube_deployment_status_replicas_unavailable`` above 0, ``kube_pod_status_ready{condition="false"}`` at 1:
  a symptom;
- a series whose name (or the query that produced it) reads as an error rate or a latency and that rose well
  above its own quiet level: a symptom, stated from that level to its peak (the samples it rests on).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from diagnosis_server.agents.heuristic import signals as sig
from diagnosis_server.agents.heuristic.analyzers.rules import Rules, current_rules
from diagnosis_server.agents.heuristic.connections import pair_findings
from diagnosis_server.agents.heuristic.findings import HEALTHY_MARK, Finding, Role, first_of_each_key
from diagnosis_server.agents.heuristic.observations import BindingError, Observation
from diagnosis_server.agents.heuristic.prometheus_series import ResultSeries, result_series
from diagnosis_server.agents.heuristic.shapes import is_object_name
from diagnosis_server.agents.heuristic.window import stale_termination
from diagnosis_server.text.metric_units import time_unit

_REASON_STATES = {
    "kube_pod_container_status_last_terminated_reason": "last_terminated",
    "kube_pod_container_status_terminated_reason": "terminated",
    "kube_pod_container_status_waiting_reason": "waiting",
    # An init container's, read like an app container's (a pod stuck in Init:CrashLoopBackOff).
    "kube_pod_init_container_status_last_terminated_reason": "last_terminated",
    "kube_pod_init_container_status_terminated_reason": "terminated",
    "kube_pod_init_container_status_waiting_reason": "waiting",
    # The pod's status.reason (Evicted, NodeLost, UnexpectedAdmissionError, ...).
    "kube_pod_status_reason": "pod",
}
_STATUS_LABELS = ("status", "code", "status_code", "http_status")


def _reason_finding(series: ResultSeries, rules: Rules, observations: Sequence[Observation] = ()) -> Finding | None:
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
    if pod and pod != service and is_object_name(pod):
        bindings.append(series.bind_label("pod"))
        detail += f" for pod {pod}"
    role, strength = rule.role_value, rule.strength
    # A last termination of a container whose restart counter stayed flat over the window is older than the
    # window: context, never the incident's cause (window.stale_termination).
    if state == "last_terminated" and pod and stale_termination(observations, pod, series.labels.get("container", "")):
        role, strength = Role.SUPPORT, 1
    return Finding(
        rule.kind,
        role,
        service,
        f"{service} {rule.phrase} ({detail})",
        tuple(bindings),
        strength=strength,
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
    # The series' quiet level: the lowest of its first fifth (a window may open just before the rise, or on a
    # blip); a rise is what follows it, stated from that level.
    start = series.samples[: max(1, len(series.samples) // 5)]
    quiet = min(start, key=lambda s: s.value)
    after = series.samples[series.samples.index(quiet) :]
    above = [s for s in after if s.value > _threshold(series, family).value(quiet.value)]
    owner = series.service()
    if owner is None:
        return None
    service, service_binding = owner
    # The family word, then the series' exact name (bound); a value's unit only as the name states it (bound
    # with the name: ``_seconds`` is ``s``).
    what = sig.signal_subject(family, series.name)
    unit = time_unit(series.name)
    unit = f" {unit}" if unit else ""
    named = [series.obs.bind("data", "result", series.index, "metric", "__name__")] if series.name else []
    if len(above) < sig.MIN_ANOMALOUS_POINTS:
        first, peak = series.samples[0], max(series.samples, key=lambda s: s.value)
        statement = f"{service} {what} {HEALTHY_MARK} (peak {peak.text}{unit}, first sample {first.text}{unit})"
        bindings = [service_binding, series.bind_sample(first), series.bind_sample(peak), *named]
        return Finding("within_baseline", Role.HEALTHY, service, statement, tuple(bindings))
    peak, onset = max(after, key=lambda s: s.value), above[0]
    bindings = [service_binding, series.bind_sample(quiet), series.bind_sample(peak), *named]
    if onset.index not in (peak.index, quiet.index):
        bindings.append(series.bind_sample(onset))
    statement = f"{service} {what} rose from {quiet.text}{unit} to {peak.text}{unit}"
    return Finding(family, Role.SYMPTOM, service, statement, tuple(bindings))


def prometheus_findings(observations: Iterable[Observation], rules: Rules | None = None) -> list[Finding]:
    rules = rules or current_rules()
    observations = list(observations)
    seen: set[tuple[str, str, str]] = set()
    all_series = result_series(observations)
    analyzers: tuple[Callable[[ResultSeries], Finding | None], ...] = (
        lambda s: _reason_finding(s, rules, observations),
        lambda s: _grown(s, rules),
        _unavailable,
        _symptom,
    )
    out = first_of_each_key(all_series, analyzers, seen)
    try:
        pairs = pair_findings(all_series, rules)
    except BindingError:
        pairs = []
    out += [f for f in pairs if f.key not in seen]
    return out
