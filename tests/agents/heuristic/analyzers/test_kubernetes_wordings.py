"""What real Kubernetes emits, read the way an SRE reads it: workload names from controllers' naming, a sidecar's
events kept apart from its app's, a pod being deleted, and the root cause of a runtime's wrapped error.

Messages are the kubelet's, the scheduler's and the container runtime's own wordings.
"""

from __future__ import annotations

import pytest

from diagnosis_server.agents.heuristic.analyzers.events import event_findings
from diagnosis_server.agents.heuristic.analyzers.pods import pod_findings
from diagnosis_server.agents.heuristic.findings import Role, cause_statement
from diagnosis_server.agents.heuristic.workloads import workload_of_job, workload_of_pod, workload_of_replicaset

from ._checks import kinds, one, sound
from ._shapes import container, event_list, k8s_event, pod, pod_list, terminated, waiting

APP = "checkout-api-7f9c6d8b5-tr6zn"
RUNC = (
    "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: "
    'unable to start container process: exec: "gunicorn": executable file not found in $PATH: unknown'
)


@pytest.mark.parametrize(
    ("pod_name", "workload"),
    [
        ("checkout-api-7f9c6d8b5-tr6zn", "checkout-api"),  # Deployment: template hash, then the pod's suffix
        ("node-exporter-x7k2p", "node-exporter"),  # DaemonSet: a suffix only ("exporter" is no hash)
        ("prometheus-node-exporter-4qz8m", "prometheus-node-exporter"),
        ("db-migrate-q8w2z", "db-migrate"),  # a plain Job's pod
        ("nightly-etl-29012345-x7k2p", "nightly-etl"),  # a CronJob's Job's pod
        ("orders-db-0", "orders-db"),  # StatefulSet ordinal
        ("search-api-2l544bkrht-4rxpb", "search-api"),
    ],
)
def test_a_pods_workload_is_read_from_its_controllers_naming(pod_name: str, workload: str) -> None:
    """A ReplicaSet's template hash is in Kubernetes' safe alphabet, which has no vowel: a word is no hash."""
    assert workload_of_pod(pod_name) == workload


def test_replicasets_and_cronjob_jobs_name_their_workload() -> None:
    assert workload_of_replicaset("checkout-api-7f9c6d8b5") == "checkout-api"
    assert workload_of_replicaset("node-exporter") == "node-exporter"
    assert workload_of_job("nightly-etl-29012345") == "nightly-etl"
    assert workload_of_job("db-migrate") == "db-migrate"


def test_a_cronjobs_failed_job_is_the_cronjobs() -> None:
    obs = event_list(
        k8s_event(
            "Job", "nightly-etl-29012345", "BackoffLimitExceeded", "Job has reached the specified backoff limit", 9
        )
    )
    assert one(sound(event_findings([obs]), [obs]), "job_failed").service == "nightly-etl"


def test_a_sidecars_pulled_image_does_not_end_the_apps_failed_pull() -> None:
    """Both events name their container (``involvedObject.fieldPath``): the istio-proxy's Pulled is not the app's."""
    failed = k8s_event(
        "Pod",
        APP,
        "Failed",
        'Failed to pull image "registry.acme.io/shop/checkout-api:1.9.1": rpc error: code = NotFound desc = '
        'failed to pull and unpack image "registry.acme.io/shop/checkout-api:1.9.1": not found',
        4,
    )
    failed["involvedObject"]["fieldPath"] = "spec.containers{api}"
    sidecar = k8s_event(
        "Pod",
        APP,
        "Pulled",
        'Container image "docker.io/istio/proxyv2:1.22.3" already present on machine',
        5,
        type_="Normal",
    )
    sidecar["involvedObject"]["fieldPath"] = "spec.containers{istio-proxy}"
    obs = event_list(failed, sidecar)
    assert one(sound(event_findings([obs]), [obs]), "image_pull").role is Role.CAUSE

    own = dict(sidecar, involvedObject={**sidecar["involvedObject"], "fieldPath": "spec.containers{api}"})
    cleared = event_list(failed, own)
    assert "image_pull" not in kinds(event_findings([cleared]))


def test_a_pod_being_deleted_is_not_failing_because_its_containers_were_stopped() -> None:
    """A rollout stops the old pod's containers (exit 143): not a crash while the pod is being deleted."""
    stopped = container("api", ready=False, state=terminated("Error", 143))
    deleting = pod(APP, app="checkout-api", containers=[stopped])
    deleting["metadata"]["deletionTimestamp"] = "2025-02-11T06:45:00Z"
    obs = pod_list(deleting)
    assert "crash_exit" not in kinds(pod_findings([obs]))
    live = pod_list(pod(APP, app="checkout-api", containers=[stopped]))
    assert "crash_exit" in kinds(sound(pod_findings([live]), [live]))


def test_a_runtimes_wrapped_error_is_quoted_by_its_root_cause() -> None:
    """StartError's message is containerd's and runc's chain: the cause claim quotes its end, the missing binary."""
    last = container(
        "web",
        ready=False,
        restarts=5,
        state=waiting("CrashLoopBackOff"),
        last_state=terminated("StartError", 128, message=RUNC),
    )
    obs = pod_list(pod("pricing-api-8p7zdnglvv-fdtwj", app="pricing-api", containers=[last]))
    finding = one(sound(pod_findings([obs]), [obs]), "container_config")
    assert finding.role is Role.CAUSE
    assert 'exec: "gunicorn": executable file not found in $PATH' in cause_statement(finding)


def test_an_events_cause_quotes_the_last_of_its_rules_matches() -> None:
    obs = event_list(k8s_event("Pod", APP, "Failed", f"Error: {RUNC}", 3))
    finding = one(sound(event_findings([obs]), [obs]), "container_config")
    assert "executable file not found" in finding.detail


@pytest.mark.parametrize(
    ("reason", "message", "kind"),
    [
        (
            "FailedCreatePodSandBox",
            "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup "
            'network for sandbox "3f6a9c1e": plugin type="calico" failed (add): connection is unauthorized',
            "sandbox",
        ),
        (
            "ErrImageNeverPull",
            'Container image "checkout-api:dev" is not present with pull policy of Never',
            "image_pull",
        ),
        ("FailedScheduling", "no nodes available to schedule pods", "unschedulable"),
        (
            "PodFailurePolicy",
            "Container main for pod shop/etl-x7k2p failed with exit code 42 matching FailJob rule at index 0",
            "job_failed",
        ),
        (
            "FailedCreate",
            'Error creating: admission webhook "validate.kyverno.svc-fail" denied the request: '
            "resource Pod/shop/checkout-api-7f9c6d8b5-abcde was blocked",
            "quota",
        ),
    ],
)
def test_more_of_what_kubernetes_reports_is_read(reason: str, message: str, kind: str) -> None:
    obs = event_list(k8s_event("Pod", APP, reason, message, 3))
    assert kind in kinds(sound(event_findings([obs]), [obs]))
