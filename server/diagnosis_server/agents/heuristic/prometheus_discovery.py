"""What a Prometheus holds for the question's workloads, found rather than assumed: its series by the labels that
name them (``prometheus.series``), then their RED series by those labels; and its metric names
(``prometheus.label_values`` of ``__name__``), then the headline series among them, as a recorded pack's known metric
names are read (``headline_names``: error rates, latencies, connections against their limits).

The plan lists the series whose naming labels (``service``, ``job``, ``app``, ``container``, ``pod``, ``instance``)
hold a workload's name over the run's window. From that listing, per workload: the label that names it (its own
value first: ``service="ledger"``; a pod or an instance by its workload's prefix), and by that label
- the 5xx share of each request counter that has a status label (``http_requests_total{code}``,
  ``http_server_requests_seconds_count{status}``): ``sum by (<label>) (rate(<counter>{<label>, <status>=~"5.."}[5m]))
  / sum by (<label>) (rate(<counter>{<label>}[5m]))``;
- the p99 of each latency histogram (``*_bucket`` with ``le``, its name saying duration, latency or seconds);
- ``process_start_time_seconds`` (restarts) when the label is not ``job`` (the plan reads that one by job).
At most ``MAX_QUERIES`` a workload; a query the plan made already is not made again. Each answer is then read by the
same analyzers as any Prometheus answer (``prometheus_results``, ``prometheus_health``): its series carry the label
that names the workload, so what they show is about it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from diagnosis_server.agents.heuristic import signals as sig
from diagnosis_server.agents.heuristic.connections import PAIR_NAMES
from diagnosis_server.agents.heuristic.observations import Observation
from diagnosis_server.agents.heuristic.shapes import is_token_name
from diagnosis_server.agents.heuristic.workloads import names, workload_of_pod
from diagnosis_server.conversions import JsonObject, JsonValue

SERIES = "prometheus.series"
LABEL_VALUES = "prometheus.label_values"
METRIC_NAMES = "__name__"
RANGE = "prometheus.query_range"
MAX_QUERIES = 5
# The naming labels in the order they name a workload best: a service's own label, then its scrape job's, ...
_NAMING = ("service", "app", "job", "container", "pod", "instance")
_STATUS = ("code", "status", "status_code", "http_status")
_REQUESTS = re.compile(r"(request|http|rpc)", re.IGNORECASE)
_LATENCY = re.compile(r"(duration|latency|seconds)", re.IGNORECASE)
PROCESS_START = "process_start_time_seconds"
MAX_NAMED_SERIES = 8
# Headline signals asked for by name when the metric names are known: error rates and latencies (not raw
# counters or histogram parts), connections in use and their limits.
_HEADLINE = (sig.ERROR, sig.LATENCY, sig.DB_CONNECTIONS, sig.POOL)


@dataclass(frozen=True, slots=True)
class Naming:
    """The label that names a workload in a Prometheus, as a matcher (``service="ledger"``, ``pod=~"ledger-.*"``)."""

    label: str
    matcher: str


def _listed(obs: Observation) -> list[dict[str, str]]:
    data = obs.get("data")
    out: list[dict[str, str]] = []
    for item in data if isinstance(data, list) else []:
        if isinstance(item, dict):
            out.append({str(k): v for k, v in item.items() if isinstance(v, str)})
    return out


def _names_it(label: str, value: str, target: str) -> bool:
    if label == "pod":
        return workload_of_pod(value) == target or value == target
    if label == "instance":
        return value.split(":")[0] == target
    return value == target or names(target, value)


def naming(series: Sequence[dict[str, str]], target: str) -> Naming | None:
    """The label that names ``target`` in the listed series: a label holding exactly its name first, in
    ``_NAMING`` order; else a pod (by its workload), an instance (by its host) or a dashed relative of the name."""
    for label in _NAMING:
        if any(s.get(label) == target for s in series):
            return Naming(label, f'{label}="{target}"')
    for label in _NAMING:
        values = sorted({s[label] for s in series if label in s and _names_it(label, s[label], target)})
        value = next((v for v in values if is_token_name(v)), None)
        if value is None:
            continue
        if label == "pod":
            return Naming(label, f'pod=~"{target}(-.*)?"')
        if label == "instance":
            return Naming(label, f'instance=~"{target}(:.*)?"')
        return Naming(label, f'{label}="{value}"')
    return None


def _selected(series: Sequence[dict[str, str]], found: Naming, target: str) -> list[dict[str, str]]:
    return [s for s in series if found.label in s and _names_it(found.label, s[found.label], target)]


def red_queries(series: Sequence[dict[str, str]], target: str) -> list[tuple[str, str]]:
    """(query, purpose) of ``target``'s RED series by the label that names it, from the series listed."""
    found = naming(series, target)
    if found is None:
        return []
    mine = _selected(series, found, target)
    by = found.label
    sel = found.matcher
    out: list[tuple[str, str]] = []
    counters = sorted({s.get("__name__", "") for s in mine})
    for name in counters:
        if not name.endswith(("_total", "_count")) or not _REQUESTS.search(name):
            continue
        status = next((key for key in _STATUS if any(key in s for s in mine if s.get("__name__") == name)), None)
        if status is None:
            continue
        errors = f'sum by ({by}) (rate({name}{{{sel},{status}=~"5.."}}[5m]))'
        out.append((f"{errors} / sum by ({by}) (rate({name}{{{sel}}}[5m]))", f"{target}'s 5xx share ({name})"))
    for name in counters:
        if not name.endswith("_bucket") or not _LATENCY.search(name):
            continue
        if not any("le" in s for s in mine if s.get("__name__") == name):
            continue
        query = f"histogram_quantile(0.99, sum by ({by}, le) (rate({name}{{{sel}}}[5m])))"
        out.append((query, f"{target}'s p99 latency ({name})"))
    if by != "job" and PROCESS_START in counters:
        out.append((f"{PROCESS_START}{{{sel}}}", f"{target}'s process restarts (start time changes)"))
    return out[:MAX_QUERIES]


def headline_names(context: JsonValue) -> list[str]:
    """The metric names (``context.prometheus.metric_names``) that read as a headline signal, at most
    ``MAX_NAMED_SERIES``, error rates and latencies first."""
    prometheus = context.get("prometheus") if isinstance(context, dict) else None
    names = prometheus.get("metric_names") if isinstance(prometheus, dict) else None
    if not isinstance(names, list):
        return []
    ranked: list[tuple[int, str]] = []
    for name in names:
        if not isinstance(name, str):
            continue
        if name in PAIR_NAMES:
            ranked.append((len(_HEADLINE), name))
            continue
        family = sig.metric_family(name)
        if family in _HEADLINE and not name.endswith(("_total", "_count", "_sum", "_bucket")):
            ranked.append((_HEADLINE.index(family), name))
    return [name for _, name in sorted(ranked)][:MAX_NAMED_SERIES]


def discovery_steps(targets: Sequence[str]) -> list[tuple[str, JsonObject, str]]:
    """The plan's listings of what Prometheus holds: its metric names, and each workload's series (the plan adds
    its window)."""
    steps: list[tuple[str, JsonObject, str]] = [(LABEL_VALUES, {"label": METRIC_NAMES}, "the metric names it holds")]
    return steps + [(SERIES, {"name": t}, f"the series Prometheus holds for {t}") for t in targets]


def _headline_calls(obs: Observation) -> list[str]:
    """The headline metric names a ``__name__`` listing holds."""
    data = obs.get("data")
    names: list[JsonValue] = [n for n in data if isinstance(n, str)] if isinstance(data, list) else []
    return headline_names({"prometheus": {"metric_names": names}})


def discovered_calls(observations: Sequence[Observation], tools: Sequence[str]) -> list[tuple[str, JsonObject]]:
    """The RED range reads the series listings call for, over the listing's own span, none made already."""
    if RANGE not in tools:
        return []
    made = {str(o.arguments.get("query")) for o in observations if o.tool_name in (RANGE, "prometheus.query")}
    calls: list[tuple[str, JsonObject]] = []
    for obs in observations:
        span: JsonObject = {k: v for k, v in obs.arguments.items() if k in ("start", "end")}
        if obs.tool_name == LABEL_VALUES and obs.arguments.get("label") == METRIC_NAMES:
            for name in _headline_calls(obs):
                if name not in made:
                    made.add(name)
                    calls.append((RANGE, {"query": name, **span}))
            continue
        target = obs.arguments.get("name")
        if obs.tool_name != SERIES or not isinstance(target, str):
            continue
        for query, _purpose in red_queries(_listed(obs), target):
            if query in made:
                continue
            made.add(query)
            calls.append((RANGE, {"query": query, **span}))
    return calls
