"""Full-graph runs over a namespace's events read as its Warnings, then completed (``follow_ups.event_calls``).

Each pack is written here with the corpus kit (core/v1 Pods and Events as ``kubectl get -o json`` shows them, the
kubelet's, scheduler's and volume binder's own reasons and messages) and runs through the Orchestrator with the
heuristic provider over the tools the server gives a recorded pack.
"""

from __future__ import annotations

from typing import Any

from diagnosis.v1 import contracts_pb2, run_pb2
from tests.agents.heuristic._graph_runs import run_pack
from tests.incidents.corpus.kit import Json, Pack, container, running, status, terminated, unschedulable, waiting

NAMESPACE = "fulfilment"
IMAGE = "registry.acme.io/fulfilment/picker:4.2.1"
NODES = ("worker-a.k8s.acme.internal", "worker-b.k8s.acme.internal", "worker-c.k8s.acme.internal")


def _pack(name: str, question: str) -> Pack:
    pack = Pack(
        name,
        title=name,
        description="Written by a test: one namespace's pods and events.",
        question=question,
        start="2025-09-02T08:00:00Z",
        minutes=30,
    )
    pack.service("picker-api", "http", namespace=NAMESPACE)
    pack.service("label-printer", "http", namespace=NAMESPACE)
    pack.truth(kind="written_by_a_test", summary="not judged: each test asserts its own outcome")
    return pack


def _routine(pack: Pack, count: int) -> None:
    """A busy namespace's lifecycle noise: label-printer's pods scheduled, pulled, created and started."""
    for i in range(count):
        pod = f"label-printer-5c7d9b6f48-{i:05d}"
        minute = 1 + 20 * i / count
        node = NODES[i % len(NODES)]
        pack.scheduled(minute, NAMESPACE, pod, node)
        pack.event(minute, NAMESPACE, "Pod", pod, "Pulled", f'Container image "{IMAGE}" already present on machine')
        pack.event(minute, NAMESPACE, "Pod", pod, "Created", "Created container printer")
        pack.event(minute, NAMESPACE, "Pod", pod, "Started", "Started container printer")


def _picker_pod(
    pack: Pack, pod: str, node: str, created: float, state: Json, *, ready: bool = True, **more: Any
) -> None:
    """A picker-api pod of its ReplicaSet on ``node``, its one container in ``state``."""
    pack.pod(
        pod,
        NAMESPACE,
        labels={"app": "picker-api", "pod-template-hash": "7b9f6c5d84"},
        node=node,
        containers=[container("api", IMAGE)],
        statuses=[status(pack, "api", IMAGE, state=state, ready=ready)],
        created=created,
        owner=("ReplicaSet", "picker-api-7b9f6c5d84"),
        **more,
    )


def _events_reads(invocations: list[contracts_pb2.ToolInvocation]) -> dict[str, contracts_pb2.ToolInvocation]:
    return {
        i.arguments.fields["field_selector"].string_value: i
        for i in invocations
        if i.tool_name == "kubernetes.events" and "field_selector" in i.arguments.fields
    }


def test_a_warning_behind_thousands_of_routine_events_is_read_and_named() -> None:
    """4,000 Normal events come first in the listing; the one FailedMount past them is the cause the run gives."""
    pack = _pack("busy-namespace-failed-mount", "Why is picker-api not starting?")
    _routine(pack, 1000)
    pod = "picker-api-7b9f6c5d84-q8m2x"
    pack.pod(
        pod,
        NAMESPACE,
        labels={"app": "picker-api", "pod-template-hash": "7b9f6c5d84"},
        node=NODES[0],
        containers=[container("api", IMAGE)],
        statuses=[status(pack, "api", IMAGE, state=waiting("ContainerCreating"), ready=False)],
        created=22,
        owner=("ReplicaSet", "picker-api-7b9f6c5d84"),
        phase="Pending",
    )
    message = 'MountVolume.SetUp failed for volume "picker-tls" : secret "picker-api-tls" not found'
    pack.event(22.5, NAMESPACE, "Pod", pod, "FailedMount", message, type="Warning", last=29, count=9)
    run, invocations = run_pack(pack)

    assert run.status == run_pb2.RUN_STATUS_SUCCESS, run.failure_reason
    warnings = _events_reads(invocations)["type=Warning"]
    assert warnings.status == contracts_pb2.TOOL_INVOCATION_STATUS_OK
    assert len(warnings.output.struct_value.fields["items"].list_value.values) == 1
    assert run.answer.summary.startswith("Likely cause"), run.answer_text
    assert 'secret "picker-api-tls" not found' in run.answer.likely_cause.text


def test_a_failed_scheduling_the_scheduler_later_resolved_is_not_reported() -> None:
    """The Warning read holds FailedScheduling; the pod's own events (read after it) hold the Scheduled that ends it."""
    pack = _pack("scheduling-resolved", "Is anything wrong with picker-api?")
    _routine(pack, 50)
    pod = "picker-api-7b9f6c5d84-z4n7k"
    message = (
        "0/3 nodes are available: 3 Insufficient memory. preemption: 0/3 nodes are available: "
        "3 No preemption victims found for incoming pod."
    )
    pack.event(
        4,
        NAMESPACE,
        "Pod",
        pod,
        "FailedScheduling",
        message,
        type="Warning",
        component="default-scheduler",
        new_api=True,
    )
    pack.scheduled(9, NAMESPACE, pod, NODES[1])
    _picker_pod(pack, pod, NODES[1], 3.9, running(pack, 4.4), ip="10.42.1.31")
    run, invocations = run_pack(pack)

    assert run.status == run_pb2.RUN_STATUS_SUCCESS, run.failure_reason
    reads = _events_reads(invocations)
    assert f"involvedObject.kind=Pod,involvedObject.name={pod}" in reads
    assert "cannot be scheduled" not in run.answer_text and "Insufficient memory" not in run.answer_text


def test_a_claim_the_binder_reports_only_as_a_normal_event_is_the_cause_of_the_pending_pod() -> None:
    """FailedBinding is a Normal event about the claim: the Warning read has only the scheduler's FailedScheduling;
    the read of the rules' Normal reasons finds why the claim is unbound."""
    pack = _pack("claim-failed-binding", "Why is picker-api stuck in Pending?")
    _routine(pack, 50)
    pod = "picker-api-7b9f6c5d84-v6c2d"
    pending = (
        "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 nodes are "
        "available: 3 Preemption is not helpful for scheduling."
    )
    pack.pod(
        pod,
        NAMESPACE,
        labels={"app": "picker-api", "pod-template-hash": "7b9f6c5d84"},
        containers=[container("api", IMAGE)],
        created=12,
        owner=("ReplicaSet", "picker-api-7b9f6c5d84"),
        phase="Pending",
        conditions=unschedulable(pack, 12, pending),
        volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "picker-api-data"}}],
    )
    pack.event(
        12,
        NAMESPACE,
        "Pod",
        pod,
        "FailedScheduling",
        pending,
        type="Warning",
        component="default-scheduler",
        new_api=True,
    )
    binding = "no persistent volumes available for this claim and no storage class is set"
    pack.event(
        11.5,
        NAMESPACE,
        "PersistentVolumeClaim",
        "picker-api-data",
        "FailedBinding",
        binding,
        last=29,
        count=70,
        component="persistentvolume-controller",
    )
    run, invocations = run_pack(pack)

    assert run.status == run_pb2.RUN_STATUS_SUCCESS, run.failure_reason
    reads = _events_reads(invocations)
    assert "type=Normal,reason=FailedBinding" in reads
    assert run.answer.summary.startswith("Likely cause"), run.answer_text
    assert binding in run.answer.likely_cause.text


def test_a_finished_job_known_only_by_normal_events_is_not_answered_as_unknown() -> None:
    """The Job's pods are gone and its events are Normal (SuccessfulCreate, Completed): the run reads the events of
    the objects named after it and does not say there is no data about it."""
    pack = _pack("finished-job", "Did the nightly-export job fail last night?")
    _routine(pack, 50)
    pack.event(
        2,
        NAMESPACE,
        "Job",
        "nightly-export",
        "SuccessfulCreate",
        "Created pod: nightly-export-x7k2p",
        component="job-controller",
        api_version="batch/v1",
    )
    pack.event(
        14,
        NAMESPACE,
        "Job",
        "nightly-export",
        "Completed",
        "Job completed",
        component="job-controller",
        api_version="batch/v1",
    )
    run, invocations = run_pack(pack)

    assert run.status == run_pb2.RUN_STATUS_SUCCESS, run.failure_reason
    assert "involvedObject.name=nightly-export" in _events_reads(invocations)
    assert "no data about nightly-export" not in run.answer_text, run.answer_text


def test_a_nodes_disk_pressure_is_read_from_its_own_events_and_a_host_path_writer_is_only_possible() -> None:
    """picker-api's pod is evicted on worker-a. The kubelet's NodeHasDiskPressure (a Normal event, in ``default``)
    is read through the node's own events (``follow_ups.node_event_calls``) and shown as a fact about picker-api's
    node; label-printer, which mounts hostPath /var/lib/spool there to write, is only a possible direction."""
    pack = _pack("node-disk-pressure", "Why are picker-api pods evicted?")
    node = NODES[0]
    pod = "picker-api-7b9f6c5d84-v9k5d"
    eviction = (
        "The node was low on resource: ephemeral-storage. Threshold quantity: 10737418240, available: 10413212Ki. "
        "Container api was using 88Ki, request is 0, has larger consumption of ephemeral-storage. "
    )
    terminated_state = terminated(pack, "Error", 137, 2, 14)
    _picker_pod(pack, pod, node, 2, terminated_state, ready=False, phase="Failed", reason="Evicted", message=eviction)
    pack.event(14, NAMESPACE, "Pod", pod, "Evicted", eviction, type="Warning", host=node)
    printer = "label-printer-5c7d9b6f48-h2xkq"
    printer_image = "registry.acme.io/fulfilment/printer:2.0.3"
    pack.pod(
        printer,
        NAMESPACE,
        labels={"app": "label-printer", "pod-template-hash": "5c7d9b6f48"},
        node=node,
        containers=[container("printer", printer_image, mounts=[{"name": "spool", "mountPath": "/var/spool"}])],
        statuses=[status(pack, "printer", printer_image, state=running(pack, -600))],
        created=-600,
        owner=("ReplicaSet", "label-printer-5c7d9b6f48"),
        volumes=[{"name": "spool", "hostPath": {"path": "/var/lib/spool", "type": "DirectoryOrCreate"}}],
    )
    pack.event(12, "default", "Node", node, "NodeHasDiskPressure", f"Node {node} status is now: NodeHasDiskPressure")
    run, invocations = run_pack(pack)

    assert run.status == run_pb2.RUN_STATUS_SUCCESS, run.failure_reason
    reads = _events_reads(invocations)
    node_read = reads[f"involvedObject.kind=Node,involvedObject.name={node}"]
    assert node_read.arguments.fields["namespace"].string_value == "default"
    assert run.answer.summary.startswith("Likely cause"), run.answer_text
    assert "picker-api" in run.answer.likely_cause.text and "evicted" in run.answer.likely_cause.text
    facts = [f.text for f in run.answer.confirmed_facts]
    assert any("picker-api runs on a node that reports NodeHasDiskPressure" in f for f in facts), facts
    assert not any("label-printer" in f for f in facts), facts
    directions = [d.text for d in run.answer.possible_directions]
    assert any("label-printer may fill the disk of node" in d and "/var/lib/spool" in d for d in directions)
