"""What the outputs say of the question's window, for telling an old termination from the incident's (R-V-4).

A range read (``prometheus.query_range``) covers the window: its earliest sample is the window's start as far as
the evidence shows. A container's restart counter (``kube_pod_container_status_restarts_total``) read over it that
never moved says the container did not restart in the window. A last termination (``lastState.terminated``, or
kube-state-metrics' ``..._last_terminated_reason``) that finished before the window, of a container that did not
restart since (its restarts flat over the window, or its current run started before the window), is an old event:
context, never the current incident's cause (a red herring stated as a cause is a false confirmed statement).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from diagnosis_server.agents.heuristic.observations import Observation
from diagnosis_server.agents.heuristic.prometheus_series import result_series

RESTARTS = "kube_pod_container_status_restarts_total"
# A crash-looping container restarts at least every 5 minutes (the kubelet's back-off cap): a counter flat over a
# read this long did not miss a restart in back-off.
MIN_SPAN_S = 15 * 60


def window_start(observations: Iterable[Observation]) -> datetime | None:
    """The earliest sample of any range read, when one was made."""
    starts = [s.samples[0].ts for s in result_series(observations) if s.ranged and s.samples]
    return datetime.fromtimestamp(min(starts), UTC) if starts else None


def restarts_moved(observations: Iterable[Observation], pod: str, container: str = "") -> bool | None:
    """Whether the pod's (container's) restart counter moved over a range read of it at least ``MIN_SPAN_S``
    long; None when none was read."""
    moved: bool | None = None
    for series in result_series(observations):
        labels = series.labels
        if series.name != RESTARTS or not series.ranged or labels.get("pod") != pod:
            continue
        if container and labels.get("container", container) != container:
            continue
        if series.samples[-1].ts - series.samples[0].ts < MIN_SPAN_S:
            continue
        values = [s.value for s in series.samples]
        moved = bool(moved) or max(values) > min(values)
    return moved


def stale_termination(
    observations: Iterable[Observation],
    pod: str,
    container: str = "",
    finished: datetime | None = None,
    running_since: datetime | None = None,
) -> bool:
    """A last termination that finished before the window (when its time is known), of a container that did not
    restart in it: its restart counter flat over the window, or (none read) its current run started before it."""
    observations = list(observations)
    start = window_start(observations)
    if start is None or (finished is not None and finished >= start):
        return False
    moved = restarts_moved(observations, pod, container)
    if moved is not None:
        return not moved
    return finished is not None and running_since is not None and running_since < start
