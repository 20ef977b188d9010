"""What a metric name means to an operator, and when a series counts as anomalous.

Metric names follow Prometheus conventions; a family groups the names that answer the same question
(errors, latency, memory, ...). Thresholds compare a series with its own baseline (the mean of the
start of the window, ``summary.baseline_mean``) and need two points past the threshold, so that one
noisy point is never an incident.
"""

from __future__ import annotations

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


def metric_family(name: str) -> str:
    n = name.lower()
    if "error_rate" in n or "errors_ratio" in n:
        return ERROR
    if n.startswith("upstream_latency"):
        return UPSTREAM_LATENCY
    if "p99" in n or "latency" in n or "duration" in n:
        return LATENCY
    if "memory" in n:
        return MEMORY
    if "restarts" in n:
        return RESTARTS
    if "cpu" in n:
        return CPU
    if "disk" in n:
        return DISK
    if "certificate" in n or n.startswith("tls_"):
        return CERT
    if n.endswith("replicas_available"):
        return REPLICAS_AVAILABLE
    if "replicas" in n:
        return REPLICAS
    if n.startswith("db_connections"):
        return DB_CONNECTIONS
    if "pool" in n or n.startswith("hikaricp"):
        return POOL
    if "rejected" in n:
        return REJECTED
    if "failures" in n:
        return UPSTREAM_FAILURES
    if "lag" in n:
        return LAG
    if "hit_ratio" in n:
        return CACHE
    if "per_second" in n or n.endswith("_total"):
        return TRAFFIC
    return OTHER


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
