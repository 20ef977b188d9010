"""The events reads that complete a namespace's Warning read (``follow_ups.event_calls``).

A Warning read says what went wrong; whether it is over, and the Normal events that matter, come from the warned-about
objects' own events and from a read of each reason the rules name in ``normal_reasons``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from diagnosis_server.agents.heuristic.analyzers.rules import EventRule, Rules, RulesError, bundled_rules, load_rules
from diagnosis_server.agents.heuristic.follow_ups import MAX_EVENT_OBJECTS, event_calls, follow_up_calls
from diagnosis_server.agents.heuristic.live_plan import WARNINGS
from diagnosis_server.agents.heuristic.observations import Observation
from diagnosis_server.conversions import JsonObject

from ._shapes import NAMESPACE, container, event_list, k8s_event, observation, pod, pod_list, running

SCHEDULING = (
    "0/4 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, "
    "3 Insufficient memory. preemption: 0/4 nodes are available: 1 Preemption is not helpful for scheduling, "
    "3 No preemption victims found for incoming pod."
)
READINESS = 'Readiness probe failed: Get "http://10.42.3.17:8080/ready": context deadline exceeded'
NORMAL_READS = [
    ("kubernetes.events", {"namespace": NAMESPACE, "field_selector": f"type=Normal,reason={reason}"})
    for reason in ("BackOff", "Preempted", "NotTriggerScaleUp", "FailedBinding", "SawCompletedJob", "SuccessfulRescale")
]


def _warnings(*items: dict[str, Any], namespace: str = NAMESPACE) -> Observation:
    """A namespace's Warning events, as ``kubernetes.events`` returns them for ``field_selector=type=Warning``."""
    output: JsonObject = {"apiVersion": "v1", "kind": "EventList", "metadata": {}, "items": list(items)}
    return observation("kubernetes.events", output, {"namespace": namespace, "field_selector": WARNINGS})


def _object_read(kind: str, name: str, namespace: str = NAMESPACE) -> tuple[str, JsonObject]:
    selector = f"involvedObject.kind={kind},involvedObject.name={name}"
    return ("kubernetes.events", {"namespace": namespace, "field_selector": selector})


def test_the_bundled_rules_name_the_reasons_kubernetes_reports_as_normal_events() -> None:
    """The kubelet's image pull back-off, the scheduler's preemption, the cluster autoscaler's "pod didn't trigger
    scale-up", the volume binder's FailedBinding, the CronJob controller's SawCompletedJob and an autoscaler's
    rescale are Normal events."""
    assert bundled_rules().normal_event_reasons == (
        "BackOff",
        "Preempted",
        "NotTriggerScaleUp",
        "FailedBinding",
        "SawCompletedJob",
        "SuccessfulRescale",
    )


def test_a_warning_read_asks_for_the_warned_about_objects_events_the_questions_workload_first() -> None:
    read = _warnings(
        k8s_event(
            "Pod", "ledger-api-6c9d7b8f4-h2xkq", "FailedScheduling", SCHEDULING, 3, component="default-scheduler"
        ),
        k8s_event("Pod", "orders-api-7d4f9c6b5-mx8pl", "Unhealthy", READINESS, 4),
    )
    calls = event_calls([read], ["orders-api"])
    assert calls == [
        _object_read("Pod", "orders-api-7d4f9c6b5-mx8pl"),
        _object_read("Pod", "ledger-api-6c9d7b8f4-h2xkq"),
        *NORMAL_READS,
    ]


def test_one_object_per_rule_kind_and_workload_and_no_more_than_the_bound() -> None:
    """Ten pending pods of one workload are one read (its first pod); six workloads' warnings, the bound."""
    pending = [
        k8s_event("Pod", f"batch-worker-5f6d8c7b9-{i:05d}", "FailedScheduling", SCHEDULING, i, component="scheduler")
        for i in range(10)
    ]
    others = [
        k8s_event("Pod", f"{name}-6b8d9f7c5-q2w3e", "Unhealthy", READINESS, 20 + i)
        for i, name in enumerate(("alpha-api", "beta-api", "gamma-api", "delta-api", "epsilon-api"))
    ]
    calls = event_calls([_warnings(*pending, *others)], [])
    selectors = [str(arguments["field_selector"]) for _, arguments in calls]
    objects = [selector for selector in selectors if "involvedObject" in selector]
    assert len(objects) == MAX_EVENT_OBJECTS
    assert objects[0] == "involvedObject.kind=Pod,involvedObject.name=batch-worker-5f6d8c7b9-00000"
    assert sum("batch-worker" in selector for selector in objects) == 1


def test_warnings_no_rule_reads_ask_for_nothing_more() -> None:
    """Nothing is wrong that a Normal event could explain or end: no object reads and no Normal reads."""
    read = _warnings(k8s_event("Pod", "orders-api-7d4f9c6b5-mx8pl", "DNSConfigForming", "Nameserver limits", 2))
    assert event_calls([read], ["orders-api"]) == []
    assert event_calls([_warnings()], []) == []


def test_an_unfiltered_events_read_needs_nothing_more() -> None:
    """Every event of the namespace was read: the clearing events and the Normal ones are in it."""
    read = event_list(k8s_event("Pod", "orders-api-7d4f9c6b5-mx8pl", "Unhealthy", READINESS, 4))
    assert event_calls([read], ["orders-api"]) == []


def test_each_namespace_read_gets_its_own_normal_reads_and_its_objects_their_namespace() -> None:
    first = _warnings(k8s_event("Pod", "orders-api-7d4f9c6b5-mx8pl", "Unhealthy", READINESS, 4))
    limit = "Job has reached the specified backoff limit"
    second = _warnings(
        k8s_event("Job", "ledger-export", "BackoffLimitExceeded", limit, 9, namespace="finance"), namespace="finance"
    )
    calls = event_calls([first, second], [])
    assert _object_read("Job", "ledger-export", "finance") in calls
    namespaces = [arguments["namespace"] for _, arguments in calls if "type=Normal" in str(arguments["field_selector"])]
    assert namespaces == [NAMESPACE] * len(NORMAL_READS) + ["finance"] * len(NORMAL_READS)


def test_an_operators_rule_adds_its_normal_reasons() -> None:
    extra = Rules(
        event=(
            EventRule(
                kind="sysctl_change",
                reasons=("NodeSysctlChange",),
                normal_reasons=("NodeSysctlChange",),
                role="support",
                strength=1,
                phrase="runs on a node whose settings changed",
            ),
        )
    )
    rules = bundled_rules().extended(extra, {})
    read = _warnings(k8s_event("Pod", "orders-api-7d4f9c6b5-mx8pl", "Unhealthy", READINESS, 4))
    calls = event_calls([read], [], rules)
    assert calls[-1] == (
        "kubernetes.events",
        {"namespace": NAMESPACE, "field_selector": "type=Normal,reason=NodeSysctlChange"},
    )


def test_normal_reasons_must_be_among_the_rules_reasons(tmp_path: Path) -> None:
    path = tmp_path / "rules.toml"
    path.write_text(
        'version = 1\n[[event]]\nkind = "preempted"\nreasons = ["NodeSysctlChange"]\nnormal_reasons = ["Killing"]\n'
        'role = "support"\nphrase = "pods were preempted"\n'
    )
    with pytest.raises(RulesError, match=r"normal_reasons \['Killing'\] are not among the rule's reasons"):
        load_rules(str(path))


def test_follow_ups_make_each_events_read_once_and_only_with_the_tool() -> None:
    read = _warnings(k8s_event("Pod", "orders-api-7d4f9c6b5-mx8pl", "Unhealthy", READINESS, 4))
    done = observation("kubernetes.events", {"items": []}, _object_read("Pod", "orders-api-7d4f9c6b5-mx8pl")[1])
    calls = follow_up_calls([read, done], ["orders-api"], ["kubernetes.events"])
    assert calls == NORMAL_READS
    assert follow_up_calls([read], ["orders-api"], ["kubernetes.pods"]) == []


def test_a_questions_workload_no_pod_and_no_warning_shows_has_its_named_objects_events_read() -> None:
    """A finished Job's pods are gone and its events are Normal: before "no data about nightly-etl", its events."""
    read = _warnings(k8s_event("Pod", "orders-api-7d4f9c6b5-mx8pl", "Unhealthy", READINESS, 4))
    pods = pod_list(pod("orders-api-7d4f9c6b5-mx8pl", containers=[container("api", state=running())]))
    calls = event_calls([pods, read], ["nightly-etl", "orders-api"])
    by_name = ("kubernetes.events", {"namespace": NAMESPACE, "field_selector": "involvedObject.name=nightly-etl"})
    assert by_name in calls
    assert not any(arguments["field_selector"] == "involvedObject.name=orders-api" for _, arguments in calls)
