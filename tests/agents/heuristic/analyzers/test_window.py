"""An old OOMKilled is not the incident's cause (``window.stale_termination``, R-V-4).

A container's ``lastState.terminated`` OOMKilled that finished days before the window, of a container that did not
restart in it (``kube_pod_container_status_restarts_total`` flat over the window, or its current run started before
the window), is context at most: stating it as the cause would be a false confirmed statement. An OOMKilled in
the window, or with restarts that grew, stays a cause; with no range read, no window is known and nothing changes.
"""

from __future__ import annotations

from diagnosis_server.agents.heuristic.analyzers.pods import pod_findings
from diagnosis_server.agents.heuristic.analyzers.prometheus_results import prometheus_findings
from diagnosis_server.agents.heuristic.findings import Role
from diagnosis_server.agents.heuristic.observations import Observation

from ._checks import assert_sound, one
from ._shapes import container, instant, pod, pod_list, query, query_range, ranged, running, terminated

POD = "cart-svc-7f9c6d8b5-tr6zn"
DAYS_AGO = -3 * 24 * 60


def _listing(finished: float, since: float, restarts: int = 4) -> Observation:
    oom = terminated("OOMKilled", 137, started=finished - 90, finished=finished)
    item = container("cart-svc", restarts=restarts, state=running(since), last_state=oom)
    return pod_list(pod(POD, app="cart-svc", containers=[item]))


def _restarts(*values: float) -> Observation:
    labels = {"__name__": "kube_pod_container_status_restarts_total", "pod": POD, "container": "cart-svc"}
    return query_range("kube_pod_container_status_restarts_total", ranged(labels, values))


def test_an_oom_kill_days_before_the_window_with_flat_restarts_is_support_stated_with_its_time() -> None:
    pods, restarts = _listing(DAYS_AGO, DAYS_AGO + 1), _restarts(*[4] * 30)
    findings = pod_findings([pods, restarts])
    assert_sound(findings, [pods, restarts])
    oom = one(findings, "oom")
    assert (oom.role, oom.strength) == (Role.SUPPORT, 1)
    assert oom.statement.endswith("finished at 2025-02-08T06:40:00Z)"), oom.statement


def test_an_oom_kill_with_restarts_that_grew_in_the_window_stays_the_cause() -> None:
    pods, restarts = _listing(DAYS_AGO, DAYS_AGO + 1), _restarts(*[1] * 10, *[2] * 10, *[4] * 10)
    assert one(pod_findings([pods, restarts]), "oom").role is Role.CAUSE


def test_an_oom_kill_in_the_window_stays_the_cause() -> None:
    pods, restarts = _listing(12, 13), _restarts(*[4] * 30)
    assert one(pod_findings([pods, restarts]), "oom").role is Role.CAUSE


def test_without_a_range_read_no_window_is_known_and_nothing_changes() -> None:
    assert one(pod_findings([_listing(DAYS_AGO, DAYS_AGO + 1)]), "oom").role is Role.CAUSE


def test_without_a_restart_counter_a_run_started_before_the_window_says_no_restart_in_it() -> None:
    """The window's start from another range read (an error rate); the container runs since days before it."""
    errors = query_range(
        "http_errors", ranged({"__name__": "http_requests_errors_ratio", "app": "cart-svc"}, [0.0] * 30)
    )
    old = _listing(DAYS_AGO, DAYS_AGO + 1)
    assert one(pod_findings([old, errors]), "oom").role is Role.SUPPORT
    # Restarted in the window (its current run started in it): the cause.
    recent_run = _listing(DAYS_AGO, 20)
    assert one(pod_findings([recent_run, errors]), "oom").role is Role.CAUSE


def test_kube_state_metrics_last_termination_with_a_flat_counter_is_support() -> None:
    labels = {
        "__name__": "kube_pod_container_status_last_terminated_reason",
        "pod": POD,
        "container": "cart-svc",
        "reason": "OOMKilled",
    }
    reason = query("kube_pod_container_status_last_terminated_reason", instant(labels, 1))
    flat, grown = _restarts(*[4] * 30), _restarts(*[1] * 15, *[5] * 15)
    stale = prometheus_findings([reason, flat])
    assert_sound(stale, [reason, flat])
    assert one(stale, "oom").role is Role.SUPPORT
    assert one(prometheus_findings([reason, grown]), "oom").role is Role.CAUSE
    # A counter read over less than 15 minutes cannot rule out a restart in back-off.
    short = _restarts(*[4] * 10)
    assert one(prometheus_findings([reason, short]), "oom").role is Role.CAUSE
