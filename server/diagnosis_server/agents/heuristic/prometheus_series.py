"""The series of what ``prometheus.query`` and ``prometheus.query_range`` answered (the API's own ``data.result``):
labels, samples (a number each; ``NaN`` and infinities are no level and are skipped) and the workload a series is
about, with the binding that names it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from diagnosis_server.agents.heuristic.observations import Binding, Observation, label_number
from diagnosis_server.agents.heuristic.shapes import is_metric_name, is_token_name
from diagnosis_server.agents.heuristic.workloads import workload_of_pod

_SERVICE_LABELS = ("service", "app", "application", "deployment", "job_name", "service_name")
# When a series describes objects (kube-state-metrics) or names its pod, the object's labels say what it is about:
# a scrape through a Service adds that Service's name (``service="prometheus-kube-state-metrics"``), which is the
# exporter's, not the workload's.
_APP_LABELS = ("app", "application")
_OBJECT_LABELS = ("deployment", "statefulset", "daemonset", "job_name", "cronjob")
_TARGET_LABELS = ("service", "service_name")
_WORKLOAD_LABELS = ("pod", "instance")
_EXPORTERS = ("kube-state-metrics", "kubelet", "node-exporter", "postgres-exporter", "app")


@dataclass(frozen=True, slots=True)
class Sample:
    index: int
    ts: float
    value: float
    text: str


def _exporter(value: str) -> bool:
    return "kube-state-metrics" in value


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

    def _about_objects(self) -> bool:
        labels = self.labels
        return (
            "pod" in labels
            or self.name.startswith("kube_")
            or any(_exporter(labels.get(key, "")) for key in ("job", "service"))
        )

    def service(self) -> tuple[str, Binding] | None:
        """The workload the series is about, and the binding of the label that names it."""
        if self._about_objects():
            keys: tuple[str, ...] = (*_APP_LABELS, *_OBJECT_LABELS, "pod", *_TARGET_LABELS, "instance")
        else:
            keys = (*_SERVICE_LABELS, *_WORKLOAD_LABELS)
        for key in keys:
            value = self.labels.get(key)
            if not is_token_name(value) or _exporter(value):
                continue  # (a label value without a name's shape is never a workload's name in a sentence)
            if key in _WORKLOAD_LABELS:
                if value[:1].isdigit():
                    continue
                workload = workload_of_pod(value.split(":")[0])
                return workload, self.bind_label(key, text=workload)
            return value, self.bind_label(key)
        job = self.labels.get("job") or self.labels.get("container")
        if job and job not in _EXPORTERS and is_token_name(job):
            key = "job" if self.labels.get("job") else "container"
            return job, self.bind_label(key)
        return None


def _samples(raw: object) -> list[Sample]:
    """The pairs ``[ts, "value"]`` that hold a time and a finite number (a range answer holds hundreds a series:
    the common pair, a float time and a text, is read without ``label_number``'s checks)."""
    out: list[Sample] = []
    append = out.append
    isfinite = math.isfinite
    for index, pair in enumerate(raw if isinstance(raw, list) else []):
        if not isinstance(pair, list) or len(pair) != 2:
            continue
        at, text = pair
        if type(text) is not str:
            continue
        try:
            value = float(text)  # float() skips surrounding whitespace itself, as label_number does
        except ValueError:
            continue
        ts = float(at) if type(at) is float or type(at) is int else label_number(at)
        # "NaN" (0/0: a ratio with no traffic) and infinities are no value to compare.
        if ts is not None and isfinite(value):
            append(Sample(index, ts, value, text))
    return out


def result_series(observations: Iterable[Observation]) -> list[ResultSeries]:
    """The series of every Prometheus answer, each answer's made once (``Observation.derived``): several analyzers
    read them, some once per pod."""
    out: list[ResultSeries] = []
    for obs in observations:
        if obs.tool_name not in ("prometheus.query", "prometheus.query_range"):
            continue
        out += obs.once("result_series", _answer_series)
    return out


def _answer_series(obs: Observation) -> list[ResultSeries]:
    out: list[ResultSeries] = []
    result = obs.get("data", "result")
    for index, item in enumerate(result if isinstance(result, list) else []):
        metric = item.get("metric") if isinstance(item, dict) else None
        if not isinstance(item, dict) or not isinstance(metric, dict):
            continue
        labels = {str(k): str(v) for k, v in metric.items() if isinstance(v, str)}
        if "__name__" in labels and not is_metric_name(labels["__name__"]):
            continue  # (Prometheus names no series so: a "name" that is not one is never written)
        if not labels.get("__name__"):
            query = obs.arguments.get("query")
            if isinstance(query, str):
                labels = {**labels, "__query__": query}
        ranged = "values" in item
        raw = item.get("values") if ranged else [item.get("value")]
        samples = tuple(_samples(raw))
        if samples:
            out.append(ResultSeries(obs, index, labels, samples, ranged))
    return out
