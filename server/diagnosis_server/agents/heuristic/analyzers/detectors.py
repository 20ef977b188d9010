"""The detector library: tool outputs in, findings out.

- metrics: error rate and latency above baseline (symptoms) or within it (healthy); memory near its
  limit, restarts, CPU at its limit, a nearly full disk, an expired certificate, unavailable replicas,
  database connections at their maximum, a client pool at its maximum, callers' upstream latency and
  connect failures;
- Kubernetes events: OOMKilled, BackOff, FailedMount, image pull failures, evictions and scheduling,
  autoscaler rescales, certificate renewal failures;
- logs: the signatures of ``signatures.py``;
- deploys: a deploy right before an error onset (with errors that carry the new version, and a
  recovery after the next deploy), or one well before it (a red herring candidate);
- combined: a dependency whose latency rose while its callers time out on it.

Each detector reads one output at a time; the whole pass is linear in the size of the outputs.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass

from diagnosis_server.agents.heuristic import signals as sig
from diagnosis_server.agents.heuristic.analyzers.rules import Thresholds, current_rules
from diagnosis_server.agents.heuristic.findings import HEALTHY_MARK, Finding, Role
from diagnosis_server.agents.heuristic.observations import Binding, BindingError, Point, Series, label_number
from diagnosis_server.agents.heuristic.shapes import is_object_name, is_quantity, is_timestamp, is_token_name, is_unit


@dataclass(frozen=True, slots=True)
class Onset:
    """Where a symptom series first rose above its threshold."""

    series: Series
    point: Point
    threshold: sig.Threshold
    baseline: float


# ------------------------------------------------------------------------------------------ metrics
def _basics(s: Series) -> list[Binding]:
    return [s.obs.bind("service"), s.obs.bind("metric")]


def _unit(s: Series) -> tuple[str, list[Binding]]:
    if is_unit(s.unit) and s.unit not in ("ratio", "count"):
        return f" {s.unit}", [s.obs.bind("unit")]
    return "", []


def _baseline_series(s: Series, family: str) -> tuple[Finding | None, Onset | None]:
    baseline = s.summary("baseline_mean")
    if baseline is None or not s.points:
        return None, None
    threshold = sig.THRESHOLDS[family]
    onset = sig.anomaly_onset(s.points, baseline, threshold)
    unit, unit_bindings = _unit(s)
    peak, base = s.summary_text("max"), s.summary_text("baseline_mean")
    bindings = [*_basics(s), s.bind_summary("max"), s.bind_summary("baseline_mean"), *unit_bindings]
    if onset is None:
        if family not in (sig.ERROR, sig.LATENCY):
            return None, None
        statement = (
            f"{s.service} {sig.signal_subject(family, s.metric)} {HEALTHY_MARK} "
            f"(peak {peak}{unit}, baseline mean {base}{unit})"
        )
        return Finding("within_baseline", Role.HEALTHY, s.service, statement, tuple(bindings)), None
    bindings.append(s.bind_point(onset, 0))
    when = s.point_ts(onset)
    rose = f"rose above its baseline to a peak of {peak}{unit} (baseline mean {base}{unit}), first above it at {when}"
    if family in (sig.UPSTREAM_LATENCY, sig.UPSTREAM_FAILURES):
        upstream = s.labels.get("upstream", "")
        if not is_token_name(upstream):
            return None, None  # (no upstream, or a "name" that is not one: never written)
        bindings.append(s.bind_label("upstream"))
        statement = f"{s.service} {s.metric} to upstream {upstream} {rose}"
        finding = Finding(family, Role.LINK, s.service, statement, tuple(bindings), onset=onset.ts, blamed=upstream)
        return finding, None
    statement = f"{s.service} {sig.signal_subject(family, s.metric)} {rose}"
    finding = Finding(family, Role.SYMPTOM, s.service, statement, tuple(bindings), onset=onset.ts)
    return finding, Onset(s, onset, threshold, baseline)


def _limit_series(s: Series, family: str, t: Thresholds) -> Finding | None:
    peak = s.summary("max")
    limit = label_number(s.labels.get("limit"))
    ratio = t.memory_near_limit if family == sig.MEMORY else t.cpu_at_limit
    if peak is None or not limit or peak < ratio * limit or not is_quantity(s.labels["limit"]):
        return None
    unit, unit_bindings = _unit(s)
    bindings = (*_basics(s), s.bind_summary("max"), s.bind_label("limit"), *unit_bindings)
    what = "memory limit" if family == sig.MEMORY else "cpu limit"
    statement = (
        f"{s.service} {s.metric} reached {s.summary_text('max')}{unit}, "
        f"at or near its {what} of {s.labels['limit']}{unit}"
    )
    kind = "memory_limit" if family == sig.MEMORY else "cpu_saturated"
    return Finding(kind, Role.SUPPORT, s.service, statement, bindings)


def _restarts(s: Series, t: Thresholds) -> Finding | None:
    first, peak = s.summary("first"), s.summary("max")
    if first is None or peak is None or peak - first < t.restarts_min:
        return None
    statement = f"{s.service} {s.metric} rose from {s.summary_text('first')} to {s.summary_text('max')}"
    bindings = (*_basics(s), s.bind_summary("first"), s.bind_summary("max"))
    return Finding("restarts", Role.SUPPORT, s.service, statement, bindings)


def _disk(s: Series, t: Thresholds) -> Finding | None:
    peak = s.summary("max")
    if peak is None or peak < t.disk_full:
        return None
    bindings = [*_basics(s), s.bind_summary("max")]
    where = ""
    if is_object_name(s.labels.get("pod")):
        where += f" on pod {s.labels['pod']}"
        bindings.append(s.bind_label("pod"))
    if is_quantity(s.labels.get("capacity")):
        where += f" of its {s.labels['capacity']} volume"
        bindings.append(s.bind_label("capacity"))
    statement = f"{s.service} disk is nearly full ({s.metric} reached {s.summary_text('max')}{where})"
    return Finding("disk_full", Role.CAUSE, s.service, statement, tuple(bindings), strength=3)


def _certificate(s: Series) -> Finding | None:
    low = s.summary("min")
    if low is None or low > 0:
        return None
    bindings = [*_basics(s), s.bind_summary("min")]
    name = ""
    if is_object_name(s.labels.get("secret")):
        name = f" {s.labels['secret']}"
        bindings.append(s.bind_label("secret"))
    when = ""
    if is_timestamp(s.labels.get("not_after")):
        when = f" at {s.labels['not_after']}"
        bindings.append(s.bind_label("not_after"))
    statement = f"{s.service} certificate{name} expired{when} ({s.metric} fell to {s.summary_text('min')})"
    return Finding("cert_expired", Role.CAUSE, s.service, statement, tuple(bindings), strength=3)


def _replicas(s: Series) -> Finding | None:
    low, first = s.summary("min"), s.summary("first")
    desired = label_number(s.labels.get("desired"))
    if low is None or first is None:
        return None
    bindings = [*_basics(s), s.bind_summary("min")]
    if desired is not None and low < desired and is_quantity(s.labels["desired"]):
        bindings.append(s.bind_label("desired"))
        statement = f"{s.service} {s.metric} fell to {s.summary_text('min')} while {s.labels['desired']} are desired"
    elif low < first:
        bindings.append(s.bind_summary("first"))
        statement = f"{s.service} {s.metric} fell from {s.summary_text('first')} to {s.summary_text('min')}"
    else:
        return None
    return Finding("replicas_unavailable", Role.SUPPORT, s.service, statement, tuple(bindings))


def _pairs(series: Sequence[Series], t: Thresholds) -> list[Finding]:
    """Connections in use against their maximum: a database at its limit, or a client pool at its size."""
    out: list[Finding] = []
    by_service: dict[str, dict[str, Series]] = {}
    for s in series:
        by_service.setdefault(s.service, {}).setdefault(s.metric, s)
    for service, metrics in by_service.items():
        for used_name, max_name, kind in (
            ("db_connections_in_use", "db_connections_max", "db_exhausted"),
            ("hikaricp_connections_active", "hikaricp_connections_max", "app_pool_full"),
        ):
            used, cap = metrics.get(used_name), metrics.get(max_name)
            if used is None or cap is None:
                continue
            peak, limit = used.summary("max"), cap.summary("max")
            if peak is None or limit is None or limit <= 0:
                continue
            bindings = (*_basics(used), used.bind_summary("max"), cap.obs.bind("metric"), cap.bind_summary("max"))
            peak_text, limit_text = used.summary_text("max"), cap.summary_text("max")
            if peak >= t.db_connections_full * limit:
                against = f"{used_name} reached {peak_text} against {max_name} {limit_text}"
                if kind == "db_exhausted":
                    statement = f"{service} connections are exhausted ({against})"
                    out.append(Finding(kind, Role.CAUSE, service, statement, bindings, strength=3))
                else:
                    statement = f"{service} connection pool is full ({against})"
                    out.append(Finding(kind, Role.SUPPORT, service, statement, bindings))
            elif kind == "db_exhausted":
                statement = f"{service} {used_name} {HEALTHY_MARK} (peak {peak_text} against {max_name} {limit_text})"
                out.append(Finding("within_baseline", Role.HEALTHY, service, statement, bindings))
    return out


def metric_findings(
    series: Sequence[Series], thresholds: Thresholds | None = None
) -> tuple[list[Finding], list[Onset]]:
    """Findings of the built-in ``metrics.query`` series, by the rules file's thresholds."""
    t = thresholds or current_rules().thresholds
    findings: list[Finding] = []
    onsets: list[Onset] = []
    for s in series:
        family = sig.metric_family(s.metric)
        try:
            if family in sig.THRESHOLDS:
                finding, onset = _baseline_series(s, family)
                if onset is not None:
                    onsets.append(onset)
            elif family in (sig.MEMORY, sig.CPU):
                finding = _limit_series(s, family, t)
            elif family == sig.RESTARTS:
                finding = _restarts(s, t)
            elif family == sig.DISK:
                finding = _disk(s, t)
            elif family == sig.CERT:
                finding = _certificate(s)
            elif family == sig.REPLICAS_AVAILABLE:
                finding = _replicas(s)
            else:
                finding = None
        except BindingError:
            continue
        if finding is not None:
            findings.append(finding)
    with contextlib.suppress(BindingError):
        findings.extend(_pairs(series, t))
    return findings, onsets
