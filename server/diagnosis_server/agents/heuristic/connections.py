"""Connections in use against their limits, across the series of one service: a database or pooler at its limit is
a cause; a client pool at its size, or callers waiting on it, support (R-AN-2: a database well under its limit is
healthy evidence).

A server-wide limit counts every connection: postgres_exporter's ``pg_stat_activity_count`` is one series per
(datname, state) and idle connections hold slots too; pgbouncer's clients are one series per pool against one
``max_client_conn``. Those series are added up per instance at each instant. The statement names every part it
adds (``12 active + 85 idle``), each bound to its sample and label; their sum is never stated, as no binding holds
it (R-V-4).
"""

from __future__ import annotations

from dataclasses import dataclass

from diagnosis_server.agents.heuristic.analyzers.rules import Rules
from diagnosis_server.agents.heuristic.findings import HEALTHY_MARK, Finding, Role
from diagnosis_server.agents.heuristic.observations import Binding
from diagnosis_server.agents.heuristic.prometheus_series import ResultSeries, Sample
from diagnosis_server.agents.heuristic.shapes import is_token_name


@dataclass(frozen=True, slots=True)
class _Pair:
    used: str
    limit: str
    kind: str
    role: Role
    strength: int
    # The series of ``used`` add up against one limit of their instance.
    summed: bool = False


_PAIRS = (
    _Pair("db_connections_in_use", "db_connections_max", "db_exhausted", Role.CAUSE, 3),
    _Pair("pg_stat_activity_count", "pg_settings_max_connections", "db_exhausted", Role.CAUSE, 3, summed=True),
    _Pair(
        "mysql_global_status_threads_connected", "mysql_global_variables_max_connections", "db_exhausted", Role.CAUSE, 3
    ),
    # pgbouncer-exporter: clients of every pool against max_client_conn (the pooler refuses past it).
    _Pair(
        "pgbouncer_pools_client_active_connections",
        "pgbouncer_config_max_client_connections",
        "db_exhausted",
        Role.CAUSE,
        3,
        summed=True,
    ),
    _Pair("pgbouncer_pools_client_waiting_connections", "", "app_pool_waiting", Role.SUPPORT, 0),
    _Pair("hikaricp_connections_active", "hikaricp_connections_max", "app_pool_full", Role.SUPPORT, 0),
    _Pair("hikaricp_connections_pending", "", "app_pool_waiting", Role.SUPPORT, 0),
)
# The series the pairs read, for a planner that knows the metric names.
PAIR_NAMES = frozenset(name for pair in _PAIRS for name in (pair.used, pair.limit) if name)
_BY_USED = {pair.used: pair for pair in _PAIRS}


@dataclass(frozen=True, slots=True)
class _Reading:
    """What the series of one group read at their peak instant: the parts, their total, the statement's words
    for them and the bindings those words rest on."""

    total: float
    text: str
    bindings: tuple[Binding, ...]


def _peak(group: list[ResultSeries]) -> _Reading:
    """The instant the group's series add up highest, each part named by the labels that tell the series apart."""
    at: dict[float, list[tuple[ResultSeries, Sample]]] = {}
    for series in group:
        for sample in series.samples:
            at.setdefault(sample.ts, []).append((series, sample))
    parts = max(at.values(), key=lambda p: sum(s.value for _, s in p))
    total = sum(s.value for _, s in parts)
    if len(parts) > 1:
        parts = [(series, sample) for series, sample in parts if sample.value != 0] or parts[:1]
    if len(parts) == 1:
        series, sample = parts[0]
        return _Reading(total, sample.text, (series.bind_sample(sample),))
    keys = sorted({k for series, _ in parts for k in series.labels if k != "__name__"})
    differing = [k for k in keys if len({series.labels.get(k, "") for series, _ in parts}) > 1]
    words: list[str] = []
    bindings: list[Binding] = []
    for series, sample in parts:
        # (a label value that is not one token is neither written nor bound; its sample still is)
        named = [k for k in differing if is_token_name(series.labels.get(k))]
        words.append(" ".join([sample.text, *(series.labels[k] for k in named)]))
        bindings += [series.bind_sample(sample), *(series.bind_label(k) for k in named)]
    return _Reading(total, " + ".join(words), tuple(bindings))


def _groups(series: list[ResultSeries]) -> dict[tuple[str, str, str], list[ResultSeries]]:
    """The series of each (service, metric name, instance): every series of a summed metric, else the first."""
    groups: dict[tuple[str, str, str], list[ResultSeries]] = {}
    for s in series:
        owner = s.service()
        if owner is None or not s.name:
            continue
        pair = _BY_USED.get(s.name)
        if pair is not None and pair.summed:
            groups.setdefault((owner[0], s.name, s.labels.get("instance", "")), []).append(s)
        else:
            groups.setdefault((owner[0], s.name, ""), [s])
    return groups


_ByService = dict[tuple[str, str], list[ResultSeries]]


def _cap(by_service: _ByService, service: str, name: str, instance: str) -> ResultSeries | None:
    """The limit series of the service: of the same instance when there is one."""
    candidates = by_service.get((service, name), [])
    same = [c for c in candidates if c.labels.get("instance", "") == instance]
    return (same or candidates)[0] if candidates else None


def _finding(
    service: str, pair: _Pair, group: list[ResultSeries], cap: ResultSeries | None, rules: Rules
) -> tuple[float, Finding] | None:
    """The finding of one group of series against its limit, with how full it is (for a limit-less pair, its
    total), or None when there is nothing to state."""
    used = group[0]
    owner = used.service()
    assert owner is not None
    reading = _peak(group)
    bindings = [owner[1], used.obs.bind("data", "result", used.index, "metric", "__name__"), *reading.bindings]
    if not pair.limit:
        if reading.total < 1:
            return None
        statement = f"{service} {pair.used} reached {reading.text}"
        return reading.total, Finding(pair.kind, pair.role, service, statement, tuple(bindings), strength=pair.strength)
    if cap is None:
        return None
    limit = max(cap.samples, key=lambda s: s.value)
    if limit.value <= 0:
        return None
    bindings += [cap.obs.bind("data", "result", cap.index, "metric", "__name__"), cap.bind_sample(limit)]
    against = f"against {pair.limit} {limit.text}"
    full = reading.total / limit.value
    if full >= rules.thresholds.db_connections_full:
        what = "connections are exhausted" if pair.kind == "db_exhausted" else "connection pool is full"
        statement = f"{service} {what} ({pair.used} reached {reading.text} {against})"
        return full, Finding(pair.kind, pair.role, service, statement, tuple(bindings), strength=pair.strength)
    if pair.kind == "db_exhausted":
        statement = f"{service} {pair.used} {HEALTHY_MARK} (peak {reading.text} {against})"
        return full, Finding("within_baseline", Role.HEALTHY, service, statement, tuple(bindings))
    return None


def pair_findings(series: list[ResultSeries], rules: Rules) -> list[Finding]:
    """One finding per service and pair: of its instances, the one nearest its limit."""
    by_service: _ByService = {}
    for s in series:
        owner = s.service()
        if owner is not None and s.name:
            by_service.setdefault((owner[0], s.name), []).append(s)
    best: dict[tuple[str, str], tuple[float, Finding]] = {}
    for (service, name, instance), group in _groups(series).items():
        pair = _BY_USED.get(name)
        if pair is None:
            continue
        found = _finding(service, pair, group, _cap(by_service, service, pair.limit, instance), rules)
        if found is not None and ((service, name) not in best or found[0] > best[(service, name)][0]):
            best[(service, name)] = found
    return [finding for _, finding in best.values()]
