"""What any Prometheus says about its targets, kube-state-metrics or not: alerts firing (``ALERTS``), scrape targets
down (``up`` at 0) and processes that restarted (``process_start_time_seconds`` moving over a range read).

- an ``ALERTS`` series with ``alertstate="firing"`` at 1: a symptom of what it labels (``<service> has alert
  <alertname> firing``), its labels and sample bound;
- an ``up`` series at 0: a symptom, the target down (``<job> target <instance> is down (up = 0)``);
- a ``process_start_time_seconds`` series that took more than one value over a range read: the process restarted
  in the window (support), from its first start time to its last.
"""

from __future__ import annotations

from collections.abc import Iterable

from diagnosis_server.agents.heuristic.findings import Finding, Role, first_of_each_key
from diagnosis_server.agents.heuristic.observations import Binding, Observation
from diagnosis_server.agents.heuristic.prometheus_series import ResultSeries, result_series
from diagnosis_server.agents.heuristic.shapes import is_token_name

ALERTS = "ALERTS"
UP = "up"
PROCESS_START = "process_start_time_seconds"
# The labels that say what an alert or a target is about, in order.
_NAMING = ("service", "app", "job", "deployment", "statefulset", "daemonset", "pod", "namespace", "instance")


def _named(series: ResultSeries) -> tuple[str, Binding] | None:
    owner = series.service()
    if owner is not None:
        return owner
    for key in _NAMING:
        if series.labels.get(key):
            return series.labels[key], series.bind_label(key)
    return None


def _alert(series: ResultSeries) -> Finding | None:
    if series.name != ALERTS or series.labels.get("alertstate") != "firing":
        return None
    if not is_token_name(series.labels.get("alertname")):
        return None  # (an alert "name" that is not one token is never written)
    firing = next((s for s in series.samples if s.value >= 1), None)
    owner = _named(series)
    if firing is None or owner is None:
        return None
    service, binding = owner
    alertname = series.labels["alertname"]
    bindings = (binding, series.bind_label("alertname"), series.bind_label("alertstate"), series.bind_sample(firing))
    return Finding("alert_firing", Role.SYMPTOM, service, f"{service} has alert {alertname} firing", bindings)


def _down(series: ResultSeries) -> Finding | None:
    if series.name != UP:
        return None
    down = next((s for s in reversed(series.samples) if s.value == 0), None)
    owner = _named(series)
    if down is None or owner is None:
        return None
    service, binding = owner
    bindings: list[Binding] = [binding, series.obs.bind("data", "result", series.index, "metric", "__name__")]
    instance = series.labels.get("instance", "")
    where = f" target {instance}" if is_token_name(instance) and instance != service else ""
    if where:
        bindings.append(series.bind_label("instance"))
    bindings.append(series.bind_sample(down))
    statement = f"{service}{where} is down (up = {down.text})"
    return Finding("target_down", Role.SYMPTOM, service, statement, tuple(bindings))


def _restarted(series: ResultSeries) -> Finding | None:
    if series.name != PROCESS_START or not series.ranged or len(series.samples) < 2:
        return None
    first, last = series.samples[0], series.samples[-1]
    changed = any(b.value != a.value for a, b in zip(series.samples, series.samples[1:], strict=False))
    owner = _named(series)
    if not changed or owner is None:
        return None
    service, binding = owner
    # No count of restarts: it is not a value the series holds, and a claim states only what its evidence does.
    statement = f"{service} restarted in the window (process start time {first.text} -> {last.text})"
    bindings = (binding, series.bind_sample(first), series.bind_sample(last))
    return Finding("process_restarts", Role.SUPPORT, service, statement, bindings)


def health_findings(observations: Iterable[Observation]) -> list[Finding]:
    """Alerts firing, targets down and processes restarted, first of each (kind, service) only."""
    return first_of_each_key(result_series(observations), (_alert, _down, _restarted), set())
