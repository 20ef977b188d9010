"""What a metric name means to an operator, and when a series counts as anomalous.

Metric names follow Prometheus conventions; a family groups the names that answer the same question
(errors, latency, memory, ...). Thresholds compare a series with its own baseline (the mean of the
start of the window, ``summary.baseline_mean``) and need two points past the threshold, so that one
noisy point is never an incident.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from diagnosis_server.agents.heuristic.observations import Point

ERROR = "error"
LATENCY = "latency"
UPSTREAM_LATENCY = "upstream_latency"
MEMORY = "memory"
RESTARTS = "restarts"
CPU = "cpu"
DISK = "disk"
CERT = "cert"
REPLICAS_AVAILABLE = "replicas_available"
REPLICAS = "replicas"
DB_CONNECTIONS = "db_connections"
POOL = "pool"
REJECTED = "rejected"
UPSTREAM_FAILURES = "upstream_failures"
LAG = "lag"
CACHE = "cache"
TRAFFIC = "traffic"
OTHER = "other"

# The order an operator reads a service's own health in (after errors and latency).
HEALTH_FAMILIES: tuple[str, ...] = (
    MEMORY,
    RESTARTS,
    CPU,
    DISK,
    CERT,
    REPLICAS_AVAILABLE,
    REPLICAS,
    DB_CONNECTIONS,
    POOL,
    REJECTED,
    UPSTREAM_FAILURES,
    UPSTREAM_LATENCY,
)
# A shallow look at another service: is it failing, slow, full, expired, out of connections?
HEADLINE_FAMILIES: tuple[str, ...] = (ERROR, LATENCY, DISK, CERT, DB_CONNECTIONS)

DEPLOY_WINDOW_S = 10 * 60
MIN_ANOMALOUS_POINTS = 2


# A name's family: the first pattern that matches it, searched in the lower-cased name (``^`` a prefix, ``\Z`` a
# suffix, else a substring anywhere).
_FAMILY_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (family, re.compile(pattern))
    for family, pattern in (
        (ERROR, r"error_rate|errors_ratio"),
        (UPSTREAM_LATENCY, r"^upstream_latency"),
        (LATENCY, r"p99|latency|duration|exec_time|response_time"),
        (MEMORY, r"memory"),
        (RESTARTS, r"restarts"),
        (CPU, r"cpu"),
        (DISK, r"disk"),
        (CERT, r"certificate|^tls_"),
        (REPLICAS_AVAILABLE, r"replicas_available\Z"),
        (REPLICAS, r"replicas"),
        (DB_CONNECTIONS, r"^db_connections"),
        (POOL, r"pool|^hikaricp"),
        (REJECTED, r"rejected"),
        (UPSTREAM_FAILURES, r"failures"),
        (LAG, r"lag"),
        (CACHE, r"hit_ratio"),
        (TRAFFIC, r"per_second|_total\Z"),
    )
)


def metric_family(name: str) -> str:
    n = name.lower()
    return next((family for family, pattern in _FAMILY_PATTERNS if pattern.search(n)), OTHER)


# What an operator calls a family's signal, in a statement about a named series.
_FAMILY_WORDS = {ERROR: "error rate", LATENCY: "latency"}


def signal_subject(family: str, name: str) -> str:
    """How a statement names a series of a headline family: its family word, then the series' exact name
    (``latency (grpc_server_handling_seconds:p99)``); the name alone when it already says the word
    (``checkout_latency_p99_ms``), or for another family."""
    word = _FAMILY_WORDS.get(family)
    if not word or not name:
        return name or word or ""
    if word in re.sub(r"[^a-z]+", " ", name.lower()):
        return name
    return f"{word} ({name})"


@dataclass(frozen=True, slots=True)
class Threshold:
    """A value above ``max(factor * baseline, baseline + delta)`` is anomalous."""

    factor: float
    delta: float

    def value(self, baseline: float) -> float:
        return max(self.factor * baseline, baseline + self.delta)


THRESHOLDS: dict[str, Threshold] = {
    ERROR: Threshold(3.0, 0.01),
    LATENCY: Threshold(3.0, 200.0),
    UPSTREAM_LATENCY: Threshold(3.0, 200.0),
    REJECTED: Threshold(3.0, 1.0),
    UPSTREAM_FAILURES: Threshold(3.0, 1.0),
}


def anomaly_onset(points: Sequence[Point], baseline: float, threshold: Threshold) -> Point | None:
    """The first point above the threshold, when at least two points are above it; else None."""
    limit = threshold.value(baseline)
    above = [p for p in points if p.value > limit]
    return above[0] if len(above) >= MIN_ANOMALOUS_POINTS else None


def first_back_within(points: Sequence[Point], baseline: float, threshold: Threshold, after: Point) -> Point | None:
    """The first point after ``after`` that is back under the threshold and stays there to the end."""
    limit = threshold.value(baseline)
    candidate: Point | None = None
    for point in points:
        if point.index <= after.index:
            continue
        if point.value > limit:
            candidate = None
        elif candidate is None:
            candidate = point
    return candidate
