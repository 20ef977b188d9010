"""Event analyzers over core/v1 EventLists (``kubernetes.events``) and recorded pack events (``k8s.events``).

The first event rule whose reasons hold the event's reason and whose message pattern matches decides; an event
a later one about the same object ends (``cleared_by``) is not reported; objects are mapped to the workload they
belong to. Every finding binds the object, the reason and the message verbatim (R-C-1, R-GK-5) and states only
what they hold (R-V-1, R-V-4).
"""

from __future__ import annotations

import pytest

from diagnosis_server.agents.heuristic.analyzers.events import event_findings, event_views
from diagnosis_server.agents.heuristic.findings import Role

from ._checks import assert_sound, kinds, one, sound
from ._shapes import event_list, k8s_event, pack_event, pack_events

POD = "seed-sorter-6d9f7c8b4d-x2k9q"
OTHER_POD = "seed-sorter-6d9f7c8b4d-m5v8c"


def test_back_off_restarting_failed_container_is_a_crash_loop_of_the_pods_workload() -> None:
    """``BackOff`` with the kubelet's "Back-off restarting failed container" message: crash-loop support about
    the workload of the pod (its name less the ReplicaSet and pod hashes)."""
    obs = event_list(
        k8s_event(
            "Pod",
            POD,
            "BackOff",
            f"Back-off restarting failed container seed-sorter in pod {POD}_greenfield(0c9d1f2e-77aa-4c1b)",
            12,
        )
    )
    findings = event_findings([obs])
    assert_sound(findings, [obs])
    finding = one(findings, "crashloop")
    assert (finding.role, finding.service, finding.strength, finding.pod) == (Role.SUPPORT, "seed-sorter", 2, POD)
    assert finding.detail.startswith("Back-off restarting failed container")
    assert [b.raw_path for b in finding.bindings][:3] == [
        "/items/0/involvedObject/name",
        "/items/0/involvedObject/name",
        "/items/0/reason",
    ]
    assert finding.bindings[0].matched_text == "seed-sorter"


def test_failed_scheduling_then_scheduled_is_over_and_reports_nothing() -> None:
    """FailedScheduling, then Scheduled for the same pod: the scheduler found a node; no unschedulable finding.
    Another pod that was never scheduled still is one (R-A-2: only what the evidence still shows)."""
    cpu = "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims"
    placed = event_list(
        k8s_event("Pod", POD, "FailedScheduling", cpu, 1, component="default-scheduler"),
        k8s_event(
            "Pod",
            POD,
            "Scheduled",
            f"Successfully assigned greenfield/{POD} to pool-b-node-3",
            4,
            type_="Normal",
            component="default-scheduler",
        ),
    )
    assert event_findings([placed]) == []

    still = event_list(
        k8s_event("Pod", POD, "FailedScheduling", cpu, 1, component="default-scheduler"),
        k8s_event("Pod", POD, "Scheduled", f"Successfully assigned greenfield/{POD} to pool-b-node-3", 4),
        k8s_event("Pod", OTHER_POD, "FailedScheduling", "0/3 nodes are available: 3 Insufficient cpu.", 2),
    )
    findings = event_findings([still])
    assert_sound(findings, [still])
    finding = one(findings, "unschedulable")
    assert (finding.role, finding.service, finding.pod) == (Role.CAUSE, "seed-sorter", OTHER_POD)
    assert "3 Insufficient cpu." in finding.statement


def test_events_with_only_an_event_time_are_cleared_by_their_event_time() -> None:
    """The scheduler reports through events.k8s.io: the core/v1 view has ``lastTimestamp`` null and an
    ``eventTime`` with microseconds. Scheduled 2.5 s after FailedScheduling still ends it."""
    obs = event_list(
        k8s_event(
            "Pod",
            POD,
            "FailedScheduling",
            "0/4 nodes are available: 4 node(s) didn't match pod anti-affinity rules.",
            None,
            event_time="2025-02-11T06:41:00.123456Z",
        ),
        k8s_event("Pod", POD, "Scheduled", "Successfully assigned", None, event_time="2025-02-11T06:41:02.654321Z"),
    )
    assert event_findings([obs]) == []


def test_a_clearing_event_before_the_failure_does_not_clear_it() -> None:
    """Pulled at 06:41, then a failed pull at 06:45 (the image tag was moved): the failure is the later word."""
    image = "registry.greenfield.example/hay-baler:3.0.0"
    obs = event_list(
        k8s_event(
            "Pod",
            "hay-baler-5c7d8f9b6c-q8w2z",
            "Pulled",
            f'Successfully pulled image "{image}" in 1.2s',
            1,
            type_="Normal",
        ),
        k8s_event(
            "Pod",
            "hay-baler-5c7d8f9b6c-q8w2z",
            "Failed",
            f'Failed to pull image "{image}": rpc error: code = NotFound desc = failed to pull and unpack image '
            f'"{image}": failed to resolve reference "{image}": not found',
            5,
        ),
    )
    findings = event_findings([obs])
    assert_sound(findings, [obs])
    finding = one(findings, "image_pull")
    assert (finding.role, finding.service, finding.strength) == (Role.CAUSE, "hay-baler", 4)
    assert finding.detail.startswith("Failed to pull image")


def test_failed_mount_of_a_missing_secret_is_a_cause_quoting_the_kubelet() -> None:
    """``FailedMount``: ``MountVolume.SetUp failed for volume "tls" : secret "..." not found``: a cause of
    strength 4 whose detail is the kubelet's message, verbatim."""
    message = 'MountVolume.SetUp failed for volume "tls" : secret "hay-baler-tls" not found'
    obs = event_list(k8s_event("Pod", "hay-baler-5c7d8f9b6c-q8w2z", "FailedMount", message, 3))
    findings = event_findings([obs])
    assert_sound(findings, [obs])
    finding = one(findings, "failed_mount")
    assert (finding.role, finding.service, finding.strength) == (Role.CAUSE, "hay-baler", 4)
    assert finding.detail == message
    assert finding.bindings[-1].matched_text == message


def test_a_missing_configmap_is_a_cause_until_the_container_starts() -> None:
    """``Failed`` with ``Error: configmap "..." not found``: the container cannot be created; ``Started`` later for
    the same pod ends it (``cleared_by``)."""
    failed = k8s_event("Pod", POD, "Failed", 'Error: configmap "seed-sorter-env" not found', 2)
    obs = event_list(failed)
    findings = event_findings([obs])
    assert_sound(findings, [obs])
    finding = one(findings, "container_config")
    assert finding.role is Role.CAUSE and finding.detail == 'Error: configmap "seed-sorter-env" not found'

    started = k8s_event("Pod", POD, "Started", "Started container seed-sorter", 9, type_="Normal")
    assert event_findings([event_list(failed, started)]) == []


@pytest.mark.parametrize(
    ("reason", "message", "kind", "role"),
    [
        (
            "Unhealthy",
            "Readiness probe failed: HTTP probe failed with statuscode: 503",
            "probe",
            Role.CAUSE,
        ),
        (
            "Unhealthy",
            'Liveness probe failed: Get "http://10.244.3.27:8080/healthz": context deadline exceeded',
            "probe",
            Role.CAUSE,
        ),
        ("Killing", "Container seed-sorter failed liveness probe, will be restarted", "probe_restart", Role.SUPPORT),
        (
            "FailedPostStartHook",
            'Exec lifecycle hook ([/bin/sh -c /opt/sorter/warm-cache.sh]) for Container "seed-sorter" in Pod '
            f"\"{POD}_greenfield(0c9d1f2e)\" failed - error: command '/bin/sh -c /opt/sorter/warm-cache.sh' exited "
            'with 1: , message: ""',
            "hook_failed",
            Role.CAUSE,
        ),
        ("Evicted", "The node was low on resource: ephemeral-storage.", "evicted", Role.CAUSE),
    ],
)
def test_kubelet_reasons_map_to_their_rule(reason: str, message: str, kind: str, role: Role) -> None:
    obs = event_list(k8s_event("Pod", POD, reason, message, 6))
    findings = event_findings([obs])
    assert_sound(findings, [obs])
    finding = one(findings, kind)
    assert (finding.role, finding.service) == (role, "seed-sorter")


def test_reasons_and_messages_no_rule_knows_give_nothing() -> None:
    """Routine events (Pulling, Created, a Killing on scale-down) and a ``Failed`` whose message says nothing a
    rule knows are not findings; nor is an event without a reason."""
    obs = event_list(
        k8s_event("Pod", POD, "Pulling", 'Pulling image "registry.greenfield.example/seed-sorter:2.4.1"', 1),
        k8s_event("Pod", POD, "Created", "Created container seed-sorter", 2, type_="Normal"),
        k8s_event("Pod", POD, "Killing", "Stopping container seed-sorter", 3, type_="Normal"),
        k8s_event("Pod", POD, "Failed", "Error: context canceled", 4),
        k8s_event("Pod", POD, "", "an event without a reason", 5),
    )
    assert event_findings([obs]) == []


def test_node_events_are_not_about_a_workload() -> None:
    """Events about a Node name no workload; they give no finding (and no view)."""
    obs = event_list(
        k8s_event("Node", "pool-b-node-3", "NodeNotReady", "Node pool-b-node-3 status is now: NodeNotReady", 1),
        k8s_event("Node", "pool-b-node-3", "EvictionThresholdMet", "Attempting to reclaim memory", 2),
    )
    assert event_views([obs]) == []
    assert event_findings([obs]) == []


def test_a_certificate_request_maps_to_the_known_workload_it_is_named_after() -> None:
    """cert-manager's CertificateRequest ``silo-gateway-tls-7`` belongs to ``silo-gateway`` when that workload is
    known; the statement names the object's kind, so the kind is bound too."""
    message = (
        "The certificate request has failed to complete and will be retried: Failed to wait for order resource "
        '"silo-gateway-tls-7-2716451990" to become ready: order is in "errored" state: Failed to create Order: '
        "429 urn:ietf:params:acme:error:rateLimited: Error creating new order :: too many certificates already issued"
    )
    event = k8s_event("CertificateRequest", "silo-gateway-tls-7", "Failed", message, 8, component="cert-manager")
    obs = event_list(event)

    findings = event_findings([obs], known=["silo", "silo-gateway", "grain-api"])
    assert_sound(findings, [obs])
    finding = one(findings, "cert_renewal")
    assert (finding.service, finding.role, finding.strength) == ("silo-gateway", Role.SUPPORT, 1)
    assert finding.cause_with == ("tls_expired", "tls_untrusted", "tls_verify_failed")
    assert "certificaterequest silo-gateway-tls-7 reports Failed" in finding.statement
    assert any(b.raw_path == "/items/0/involvedObject/kind" for b in finding.bindings)

    # Unknown owner: the object stays whole, never cut at a guess.
    lone = event_list(event)
    (alone,) = sound(event_findings([lone], known=["grain-api"]), [lone])
    assert alone.service == "silo-gateway-tls-7"


def test_a_replicaset_and_a_claim_map_to_their_workload() -> None:
    """A ReplicaSet's ``FailedCreate`` (quota exceeded) is its Deployment's; a PersistentVolumeClaim
    ``data-silo-db-0`` that cannot be provisioned is the known workload its name holds."""
    quota = (
        'Error creating: pods "hay-baler-5c7d8f9b6c-t8k2m" is forbidden: exceeded quota: greenfield-compute, '
        "requested: limits.memory=2Gi, used: limits.memory=7Gi, limited: limits.memory=8Gi"
    )
    provisioning = (
        'failed to provision volume with StorageClass "fast-ssd": rpc error: code = ResourceExhausted desc = '
        "Quota 'SSD_TOTAL_GB' exceeded. Limit: 500.0 in region europe-west4."
    )
    obs = event_list(
        k8s_event("ReplicaSet", "hay-baler-5c7d8f9b6c", "FailedCreate", quota, 2, component="replicaset-controller"),
        k8s_event("PersistentVolumeClaim", "data-silo-db-0", "ProvisioningFailed", provisioning, 3),
    )
    findings = event_findings([obs], known=["hay-baler", "silo-db"])
    assert_sound(findings, [obs])
    quota_finding = one(findings, "quota")
    assert (quota_finding.service, quota_finding.role, quota_finding.strength) == ("hay-baler", Role.CAUSE, 4)
    assert quota_finding.pod == ""  # about a ReplicaSet, not a pod
    assert one(findings, "provisioning_failed").service == "silo-db"


def test_one_finding_per_kind_and_workload_from_the_first_event() -> None:
    """Many pods of one workload in a crash loop: one claim, from the first event listed; a long message is
    quoted by its first part, verbatim."""
    tail = " while the sorter drains its in-flight batches" * 6
    obs = event_list(
        k8s_event("Pod", POD, "BackOff", f"Back-off restarting failed container seed-sorter in pod {POD}{tail}", 5),
        k8s_event(
            "Pod", OTHER_POD, "BackOff", f"Back-off restarting failed container seed-sorter in pod {OTHER_POD}", 6
        ),
    )
    findings = event_findings([obs])
    assert_sound(findings, [obs])
    finding = one(findings, "crashloop")
    assert finding.pod == POD
    quoted = [b for b in finding.bindings if b.raw_path == "/items/0/message"]
    assert quoted and all(len(b.matched_text) <= 160 for b in quoted)


def test_pack_event_records_are_read_with_their_service() -> None:
    """A recorded pack's ``k8s.events`` records carry their service; records without one are skipped."""
    obs = pack_events(
        pack_event(
            4,
            "thresher-worker",
            "Pod",
            "thresher-worker-7d9f8c6b5d-q2w8z",
            "FailedMount",
            'MountVolume.SetUp failed for volume "spool" : configmap "thresher-spool" not found',
        ),
        pack_event(5, None, "Pod", "stray-pod", "OOMKilled", "Container stray was OOMKilled"),
    )
    findings = event_findings([obs])
    assert_sound(findings, [obs])
    finding = one(findings, "failed_mount")
    assert finding.service == "thresher-worker"
    assert finding.bindings[0].raw_path == "/events/0/service"
    assert kinds(findings) == {"failed_mount"}
