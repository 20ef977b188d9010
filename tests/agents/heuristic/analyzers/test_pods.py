"""Pod analyzers over a core/v1 PodList (``kubernetes.pods``): container waiting, terminated and last-terminated
reasons, pod-level eviction, scheduling conditions, settled pods and healthy evidence.

Every finding's bindings point into the PodList verbatim (R-C-1, R-GK-5) and its statement is a direct
observation of them (R-V-1, R-V-4).
"""

from __future__ import annotations

import pytest

from diagnosis_server.agents.heuristic.analyzers.pods import pod_findings, ready_findings, settled_pods, workloads_seen
from diagnosis_server.agents.heuristic.analyzers.rules import bundled_rules
from diagnosis_server.agents.heuristic.findings import Role

from ._checks import assert_bound, assert_direct, assert_sound, kinds, one
from ._shapes import (
    condition,
    container,
    observation,
    pod,
    pod_list,
    ready_conditions,
    running,
    terminated,
    waiting,
)

SORTER = "seed-sorter-6d9f7c8b4d-x2k9q"
GRAIN_PODS = [
    pod(f"grain-api-7d9f8c6b5d-{suffix}", app="grain-api", containers=[container("grain-api")])
    for suffix in ("q2w8z", "l6k3p", "z9x4h", "b2c7j")
]


def test_oomkilled_last_state_is_a_cause_with_its_exit_code() -> None:
    """A container that last terminated OOMKilled (exit code 137) and now waits in CrashLoopBackOff: the OOM kill
    is the cause (strength 4), the crash loop backs it, and the pod is a not-ready symptom (R-C-1, R-V-1)."""
    status = container(
        "seed-sorter",
        ready=False,
        restarts=6,
        state=waiting(
            "CrashLoopBackOff",
            f"back-off 5m0s restarting failed container=seed-sorter pod={SORTER}_greenfield(0c9d1f2e)",
        ),
        last_state=terminated("OOMKilled", 137, started=2, finished=7),
    )
    obs = pod_list(pod(SORTER, app="seed-sorter", containers=[status]))
    findings = pod_findings([obs])
    assert_sound(findings, [obs])

    oom = one(findings, "oom")
    assert (oom.role, oom.service, oom.strength, oom.pod) == (Role.CAUSE, "seed-sorter", 4, SORTER)
    assert "exit code 137" in oom.statement and "last terminated with OOMKilled" in oom.statement
    assert oom.detail == "OOMKilled"
    assert oom.onset is not None and oom.onset.isoformat().startswith("2025-02-11T06:47")
    paths = {b.raw_path for b in oom.bindings}
    assert "/items/0/status/containerStatuses/0/lastState/terminated/exitCode" in paths
    assert "/items/0/metadata/labels/app.kubernetes.io~1name" in paths  # the label names the workload

    crashloop = one(findings, "crashloop")
    assert (crashloop.role, crashloop.service) == (Role.SUPPORT, "seed-sorter")
    # The kubelet's back-off boilerplate says less than the reason: the reason is what a cause claim quotes.
    assert crashloop.detail == "CrashLoopBackOff"

    symptom = one(findings, "not_ready")
    assert symptom.role is Role.SYMPTOM and "6 restarts" in symptom.statement


@pytest.mark.parametrize(
    ("reason", "message", "kind", "detail"),
    [
        (
            "ImagePullBackOff",
            'Back-off pulling image "registry.greenfield.example/seed-sorter:2.4.1"',
            "image_pull",
            "ImagePullBackOff",
        ),
        (
            "ErrImagePull",
            'rpc error: code = NotFound desc = failed to pull and unpack image "registry.greenfield.example/'
            'seed-sorter:2.4.1": not found',
            "image_pull",
            None,
        ),
        ("CreateContainerConfigError", 'configmap "seed-sorter-env" not found', "container_config", None),
        (
            "CreateContainerConfigError",
            "couldn't find key SORTER_DSN in Secret greenfield/seed-sorter-db",
            "container_config",
            None,
        ),
        (
            "InvalidImageName",
            'Failed to apply default image tag "Seed-Sorter:latest": couldn\'t parse image reference '
            '"Seed-Sorter:latest": invalid reference format: repository name must be lowercase',
            "image_pull",
            None,
        ),
    ],
)
def test_waiting_reasons_that_stop_a_container_from_starting_are_causes(
    reason: str, message: str, kind: str, detail: str | None
) -> None:
    """The kubelet's own waiting reasons (image pulls, missing configuration) are causes of strength 4, quoting
    the message unless it is back-off boilerplate (R-C-1, R-V-4)."""
    status = container("seed-sorter", ready=False, state=waiting(reason, message))
    obs = pod_list(pod(SORTER, app="seed-sorter", phase="Pending", containers=[status]))
    findings = pod_findings([obs])
    assert_sound(findings, [obs])
    finding = one(findings, kind)
    assert (finding.role, finding.service, finding.strength) == (Role.CAUSE, "seed-sorter", 4)
    # What a cause claim quotes: the reason for back-off boilerplate, else the message's start, verbatim.
    if detail:
        assert finding.detail == detail
    else:
        assert finding.detail and message.startswith(finding.detail)
    assert reason in finding.statement
    assert one(findings, "not_ready").statement.endswith("is not ready (phase Pending)")


def test_a_long_termination_message_is_cut_verbatim_and_shown_on_one_line() -> None:
    """A termination message (the container's /dev/termination-log: a Go panic and its stack) is bound by its
    first part, newlines and all, exactly as written; the statement shows it on one line (R-C-1, R-V-4)."""
    message = (
        "panic: runtime error: invalid memory address or nil pointer dereference\n"
        "[signal SIGSEGV: segmentation violation code=0x1 addr=0x18 pc=0x6b2f4a]\n\n"
        "goroutine 41 [running]:\n"
        "greenfield.example/sorter/internal/bins.(*Router).Assign(0x0, {0xc0001a2000, 0x9})\n"
        "\t/src/internal/bins/router.go:112 +0x2a"
    )
    status = container(
        "seed-sorter",
        ready=False,
        restarts=4,
        state=waiting("CrashLoopBackOff", "back-off 2m40s restarting failed container=seed-sorter"),
        last_state=terminated("Error", 2, message=message),
    )
    obs = pod_list(pod(SORTER, app="seed-sorter", containers=[status]))
    findings = pod_findings([obs])
    assert_sound(findings, [obs])
    crash = one(findings, "crash_exit")
    assert (crash.role, crash.strength) == (Role.SUPPORT, 2) and "exit code 2" in crash.statement
    quoted = next(b for b in crash.bindings if b.raw_path.endswith("/lastState/terminated/message"))
    assert "\n" in quoted.matched_text and message.startswith(quoted.matched_text)
    assert len(quoted.matched_text) <= 160
    assert "\n" not in crash.statement and "\t" not in crash.statement


def test_an_evicted_pod_is_a_cause_quoting_the_kubelets_message() -> None:
    """A pod the kubelet evicted (``status.reason`` Evicted, phase Failed) is a cause of strength 3 (R-C-1)."""
    message = (
        "The node was low on resource: memory. Threshold quantity: 100Mi, available: 83Mi. Container hay-baler "
        "was using 1844Mi, request is 512Mi, has larger consumption of memory."
    )
    evicted = pod(
        "hay-baler-5c7d8f9b6c-q8w2z",
        app="hay-baler",
        phase="Failed",
        reason="Evicted",
        message=message,
        containers=[container("hay-baler", ready=False, state=terminated("ContainerStatusUnknown", 137))],
        conditions=[condition("Ready", False, "PodFailed")],
    )
    obs = pod_list(evicted)
    findings = pod_findings([obs])
    assert_sound(findings, [obs])
    finding = one(findings, "evicted")
    assert (finding.role, finding.service, finding.strength) == (Role.CAUSE, "hay-baler", 3)
    assert "reports Evicted" in finding.statement and finding.detail.startswith("The node was low on resource")
    assert one(findings, "not_ready").statement.endswith("is not ready (phase Failed)")
    assert not settled_pods([obs])


def test_a_pending_pod_the_scheduler_cannot_place_is_unschedulable() -> None:
    """Condition PodScheduled=False, reason Unschedulable: a cause quoting the scheduler's message (R-C-1)."""
    message = (
        "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: "
        "3 No preemption victims found for incoming pod."
    )
    pending = pod(
        "silo-db-2",
        app="silo-db",
        phase="Pending",
        conditions=[condition("PodScheduled", False, "Unschedulable", message)],
    )
    obs = pod_list(pending)
    findings = pod_findings([obs])
    assert_sound(findings, [obs])
    finding = one(findings, "unschedulable")
    assert (finding.role, finding.service, finding.strength) == (Role.CAUSE, "silo-db", 3)
    assert "3 Insufficient cpu." in finding.statement
    assert any(b.raw_path == "/items/0/status/conditions/0/message" for b in finding.bindings)


def test_an_init_container_crash_loop_is_read_from_init_container_statuses() -> None:
    """``Init:CrashLoopBackOff``: the init container's waiting reason, bound under initContainerStatuses."""
    init = container(
        "migrate-schema",
        ready=False,
        restarts=5,
        state=waiting("CrashLoopBackOff", "back-off 5m0s restarting failed container=migrate-schema"),
    )
    obs = pod_list(
        pod(
            "hay-baler-5c7d8f9b6c-w7n4d",
            app="hay-baler",
            phase="Pending",
            init_containers=[init],
            containers=[container("hay-baler", ready=False, state=waiting("PodInitializing"))],
        )
    )
    findings = pod_findings([obs])
    assert_sound(findings, [obs])
    crashloop = one(findings, "crashloop")
    assert crashloop.service == "hay-baler" and "container migrate-schema" in crashloop.statement
    assert any("/initContainerStatuses/0/state/waiting/reason" in b.raw_path for b in crashloop.bindings)


def test_a_running_ready_pod_with_few_restarts_is_settled_and_healthy_evidence() -> None:
    """A pod that runs with every container ready and restarts under ``restarts_min`` is settled: its old OOM
    kill is over (no finding), and its workload's pods are healthy evidence (R-V-1)."""
    assert bundled_rules().thresholds.restarts_min == 3
    recovered = container("seed-sorter", restarts=2, last_state=terminated("OOMKilled", 137))
    pods = [
        pod(SORTER, app="seed-sorter", containers=[recovered]),
        pod("seed-sorter-6d9f7c8b4d-m5v8c", app="seed-sorter", containers=[container("seed-sorter")]),
    ]
    obs = pod_list(*pods)
    assert settled_pods([obs]) == {SORTER, "seed-sorter-6d9f7c8b4d-m5v8c"}
    assert pod_findings([obs]) == []
    (healthy,) = ready_findings([obs])
    assert_sound([healthy], [obs])
    assert (healthy.kind, healthy.role, healthy.service) == ("pods_ready", Role.HEALTHY, "seed-sorter")
    assert healthy.statement.startswith("seed-sorter pods are running with their containers ready")


def test_restarts_at_the_bar_unsettle_a_running_ready_pod() -> None:
    """The same pod with ``restarts_min`` restarts is not settled: its OOM kill is a cause and it restarts."""
    again = container("seed-sorter", restarts=3, last_state=terminated("OOMKilled", 137))
    obs = pod_list(pod(SORTER, app="seed-sorter", containers=[again]))
    assert not settled_pods([obs])
    assert ready_findings([obs]) == []
    findings = pod_findings([obs])
    assert_sound(findings, [obs])
    assert one(findings, "oom").role is Role.CAUSE
    assert one(findings, "not_ready").statement == f"seed-sorter pod {SORTER} restarts (phase Running, 3 restarts)"


def test_one_pod_not_ready_keeps_its_workload_out_of_the_healthy_evidence() -> None:
    """Healthy evidence needs every listed pod of the workload settled; other workloads are judged alone."""
    obs = pod_list(
        pod("hay-baler-5c7d8f9b6c-q8w2z", app="hay-baler", containers=[container("hay-baler")]),
        pod(
            "hay-baler-5c7d8f9b6c-r4t6y",
            app="hay-baler",
            containers=[container("hay-baler", ready=False)],
            conditions=ready_conditions(ready=False),
        ),
        *GRAIN_PODS[:3],
    )
    healthy = ready_findings([obs])
    assert_sound(healthy, [obs])
    assert [f.service for f in healthy] == ["grain-api"]
    # Each pod named is bound by its name, its phase and its one container's ready, after the workload's own binding.
    assert len(healthy[0].bindings) == 1 + 3 * 3
    findings = pod_findings([obs])
    assert_sound(findings, [obs])
    symptom = one(findings, "not_ready")
    assert symptom.service == "hay-baler" and "hay-baler-5c7d8f9b6c-r4t6y is not ready" in symptom.statement


def test_healthy_evidence_of_a_workload_with_many_pods_is_a_direct_observation() -> None:
    """A workload of four ready pods: its healthy claim must still be a direct observation of its own bindings
    (R-V-1); a number no evidence holds is a fabricated fact (R-V-4)."""
    obs = pod_list(*GRAIN_PODS)
    (healthy,) = ready_findings([obs])
    assert_bound([healthy], [obs])
    assert_direct([healthy])


def test_a_completed_job_pod_counts_as_settled() -> None:
    """A pod that Succeeded (a finished Job) is settled; phases are named as they are."""
    obs = pod_list(
        pod(
            "silo-compactor-29012345-kq7vd",
            app="silo-compactor",
            phase="Succeeded",
            containers=[container("compactor", ready=False, state=terminated("Completed", 0))],
            conditions=[condition("Ready", False, "PodCompleted")],
        ),
        pod("silo-compactor-29012346-p2m8r", app="silo-compactor", containers=[container("compactor")]),
    )
    assert pod_findings([obs]) == []
    (healthy,) = ready_findings([obs])
    assert_sound([healthy], [obs])
    assert "pods are running with their containers ready or succeeded" in healthy.statement


def test_one_finding_per_kind_and_workload() -> None:
    """Two pods OOMKilled repeat one claim: one finding, from the first pod that shows it."""
    first = container("seed-sorter", ready=False, restarts=4, last_state=terminated("OOMKilled", 137))
    second = container("seed-sorter", ready=False, restarts=5, last_state=terminated("OOMKilled", 137))
    obs = pod_list(
        pod(SORTER, app="seed-sorter", containers=[first]),
        pod("seed-sorter-6d9f7c8b4d-m5v8c", app="seed-sorter", containers=[second]),
    )
    findings = pod_findings([obs])
    assert_sound(findings, [obs])
    assert one(findings, "oom").pod == SORTER
    assert one(findings, "not_ready").pod == ""


@pytest.mark.parametrize(
    ("name", "workload"),
    [
        ("thresher-worker-7d9f8c6b5d-q2w8z", "thresher-worker"),  # Deployment: ReplicaSet hash, pod hash
        ("silo-db-2", "silo-db"),  # StatefulSet ordinal
        ("mill-node-agent-8xk2p", "mill-node-agent"),  # DaemonSet hash
    ],
)
def test_an_unlabelled_pod_is_its_controllers_workload_bound_by_its_name(name: str, workload: str) -> None:
    """Without a workload label the workload is the pod name less its controller's suffix, and the binding is
    that prefix of ``metadata.name`` (R-C-1)."""
    status = container(
        "main", ready=False, state=waiting("CreateContainerConfigError", 'secret "mill-creds" not found')
    )
    obs = pod_list(pod(name, phase="Pending", containers=[status]))
    assert workloads_seen([obs]) == [workload]
    findings = pod_findings([obs])
    assert_sound(findings, [obs])
    finding = one(findings, "container_config")
    assert finding.service == workload
    assert finding.bindings[0].raw_path == "/items/0/metadata/name"
    assert finding.bindings[0].matched_text == workload


def test_other_outputs_and_malformed_items_give_nothing() -> None:
    """Only ``kubernetes.pods`` is read; items without a name are skipped, not guessed at."""
    status = container("seed-sorter", ready=False, state=waiting("ErrImagePull", "pull access denied"))
    not_pods = observation("kubernetes.events", {"items": [pod(SORTER, containers=[status])]})
    malformed = pod_list({"metadata": {}, "status": {"phase": "Pending"}}, {"status": {}}, "not-a-pod")  # type: ignore[arg-type]
    assert pod_findings([not_pods, malformed]) == []
    assert ready_findings([not_pods, malformed]) == []
    assert kinds(pod_findings([pod_list(pod(SORTER, containers=[container("a", state=running())]))])) == set()
