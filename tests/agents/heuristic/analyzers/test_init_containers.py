"""A pod stuck in init (kubectl's "Init:CrashLoopBackOff"): its ``status.initContainerStatuses`` are read like its app
containers' (the init container's reason is the finding, bound under ``initContainerStatuses``), its failing
init container's previous log is read, and kube-state-metrics' ``kube_pod_init_container_status_*_reason`` and
``kube_pod_status_reason`` series are read like their app-container twins."""

from __future__ import annotations

from diagnosis_server.agents.heuristic.analyzers.pods import pod_findings
from diagnosis_server.agents.heuristic.analyzers.prometheus_results import prometheus_findings
from diagnosis_server.agents.heuristic.findings import Role
from diagnosis_server.agents.heuristic.follow_ups import follow_up_calls

from ._checks import assert_sound, kinds, one
from ._shapes import condition, container, instant, pod, pod_list, query, terminated, waiting

POD = "billing-api-5d8f7b9c6d-k2m4p"
BACK_OFF = f"back-off 2m40s restarting failed container=migrate pod={POD}_greenfield(1f0c)"


def _stuck_in_init() -> dict[str, object]:
    init = container(
        "migrate",
        ready=False,
        restarts=6,
        state=waiting("CrashLoopBackOff", BACK_OFF),
        last_state=terminated("Error", 1, started=20, finished=21),
    )
    app = container("billing-api", ready=False, state=waiting("PodInitializing"))
    conditions = [
        condition("Initialized", False, "ContainersNotInitialized", "containers with incomplete status: [migrate]"),
        condition("Ready", False, "ContainersNotReady", "containers with unready status: [billing-api]"),
        condition("PodScheduled", True),
    ]
    return pod(POD, app="billing-api", phase="Pending", containers=[app], init_containers=[init], conditions=conditions)


def test_an_init_container_in_a_crash_loop_is_the_failing_workloads_finding() -> None:
    obs = pod_list(_stuck_in_init())
    findings = pod_findings([obs])
    assert_sound(findings, [obs])
    assert {"crashloop", "crash_exit", "not_ready"} <= kinds(findings)
    crash = one(findings, "crashloop")
    assert crash.service == "billing-api" and f"pod {POD} container migrate is waiting with" in crash.statement
    assert any(b.raw_path == "/items/0/status/initContainerStatuses/0/state/waiting/reason" for b in crash.bindings)
    assert one(findings, "not_ready").role is Role.SYMPTOM


def test_the_failing_init_containers_previous_log_is_read() -> None:
    obs = pod_list(_stuck_in_init())
    calls = follow_up_calls([obs], ["billing-api"], ["kubernetes.pod_logs"])
    assert calls == [
        (
            "kubernetes.pod_logs",
            {"namespace": "greenfield", "pod": POD, "container": "migrate", "tail_lines": 100, "previous": True},
        )
    ]


def test_a_completed_init_container_is_not_read_for_its_log() -> None:
    item = _stuck_in_init()
    done = container("migrate", ready=True, restarts=2, state=terminated("Completed", 0))
    item["status"]["initContainerStatuses"] = [done]  # type: ignore[index]
    item["status"]["containerStatuses"][0]["state"] = waiting("CrashLoopBackOff", BACK_OFF)  # type: ignore[index]
    calls = follow_up_calls([pod_list(item)], ["billing-api"], ["kubernetes.pod_logs"])
    assert [c[1]["container"] for c in calls] == ["billing-api"]


def test_kube_state_metrics_init_container_and_pod_reasons() -> None:
    init = query(
        "kube_pod_init_container_status_waiting_reason",
        instant(
            {
                "__name__": "kube_pod_init_container_status_waiting_reason",
                "pod": POD,
                "container": "migrate",
                "reason": "CrashLoopBackOff",
            },
            1,
        ),
    )
    evicted = query(
        "kube_pod_status_reason",
        instant({"__name__": "kube_pod_status_reason", "pod": POD, "reason": "Evicted"}, 1),
    )
    findings = prometheus_findings([init, evicted])
    assert_sound(findings, [init, evicted])
    assert one(findings, "crashloop").service == "billing-api"
    assert one(findings, "evicted").role is Role.CAUSE
