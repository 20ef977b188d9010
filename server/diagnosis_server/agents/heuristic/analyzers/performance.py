"""Performance: a container the kernel throttles at its CPU limit, from cAdvisor's CFS counters in Prometheus.

``container_cpu_cfs_throttled_periods_total`` and ``container_cpu_cfs_periods_total`` of one pod and container
(a ``prometheus.query_range`` matrix): when the throttled periods grew by at least ``THROTTLED_SHARE`` of the
periods over the range, the container spent that share of its scheduling periods at its quota. The statement gives
both counters' first and last samples (bound), never a computed ratio, and the container's CPU limit when its pod
was read.
"""

from __future__ import annotations

from diagnosis_server.agents.heuristic.analyzers.evidence import Evidence
from diagnosis_server.agents.heuristic.analyzers.joined import joined
from diagnosis_server.agents.heuristic.findings import Finding
from diagnosis_server.agents.heuristic.observations import Binding, Observation, label_number, walk
from diagnosis_server.agents.heuristic.shapes import is_container_name, is_object_name, is_quantity
from diagnosis_server.agents.heuristic.workloads import workload_of_pod

THROTTLED = "container_cpu_cfs_throttled_periods_total"
PERIODS = "container_cpu_cfs_periods_total"
THROTTLED_SHARE = 0.25
Key = tuple[str, str, str]
Counter = tuple[Observation, int, int, float, float]


def _counters(evidence: Evidence, metric: str) -> dict[Key, Counter]:
    """(namespace, pod, container) -> (observation, series index, last sample index, first, last value)."""
    out: dict[Key, Counter] = {}
    for obs in evidence.observations:
        if obs.tool_name != "prometheus.query_range":
            continue
        result = obs.get("data", "result")
        for r, series in enumerate(result if isinstance(result, list) else []):
            labels = walk(series, ("metric",))
            values = walk(series, ("values",))
            if not isinstance(labels, dict) or labels.get("__name__") != metric or not isinstance(values, list):
                continue
            if len(values) < 2:
                continue
            first, last = label_number(walk(values, (0, 1))), label_number(walk(values, (len(values) - 1, 1)))
            pod, container = str(labels.get("pod") or ""), str(labels.get("container") or "")
            if first is None or last is None or not pod or not container:
                continue
            out.setdefault((str(labels.get("namespace") or ""), pod, container), (obs, r, len(values) - 1, first, last))
    return out


def _bind(counter: Counter) -> list[Binding]:
    obs, r, last, _, _ = counter
    base = ("data", "result", r)
    return [obs.bind(*base, "metric", "__name__"), obs.bind(*base, "values", 0, 1), obs.bind(*base, "values", last, 1)]


def analyze(evidence: Evidence) -> list[Finding]:
    throttled, periods = _counters(evidence, THROTTLED), _counters(evidence, PERIODS)
    out: list[Finding] = []
    for key, counted in throttled.items():
        total = periods.get(key)
        if total is None:
            continue
        grew, ran = counted[4] - counted[3], total[4] - total[3]
        if ran <= 0 or grew / ran < THROTTLED_SHARE:
            continue
        namespace, pod_name, container = key
        if not (is_object_name(pod_name) and is_container_name(container)) or (
            namespace and not is_container_name(namespace)
        ):
            continue  # never a name in a sentence
        obs, r = counted[0], counted[1]
        bindings = [
            obs.bind("data", "result", r, "metric", "pod", text=workload_of_pod(pod_name)),
            obs.bind("data", "result", r, "metric", "pod"),
            obs.bind("data", "result", r, "metric", "container"),
            *_bind(counted),
            *_bind(total),
        ]
        facts = (
            f"{THROTTLED} of container {container} of pod {pod_name} rose from {counted[3]:g} to {counted[4]:g} "
            f"while {PERIODS} rose from {total[3]:g} to {total[4]:g}"
        )
        pod = evidence.named("Pod", pod_name, namespace)
        containers = pod.get("spec", "containers") if pod is not None else None
        for c, spec in enumerate(containers if isinstance(containers, list) else []):
            limit = walk(spec, ("resources", "limits", "cpu"))
            if pod is not None and walk(spec, ("name",)) == container and isinstance(limit, str) and is_quantity(limit):
                facts += f"; its cpu limit is {limit}"
                bindings.append(pod.bind("spec", "containers", c, "resources", "limits", "cpu"))
        out.append(joined("cpu_throttled", workload_of_pod(pod_name), "is slowed at its CPU limit", facts, bindings))
    return out
