"""The cluster analyzers' one shape: every module under analyzers/ with an ``analyze`` is registered once, and
an absence is stated only from a whole List (a selector-narrowed read proves nothing missing)."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

import pytest

from diagnosis_server.agents.heuristic import analyzers
from diagnosis_server.agents.heuristic.analyzers.evidence import Evidence
from diagnosis_server.agents.heuristic.analyzers.registry import ANALYZERS, analyze_all
from diagnosis_server.agents.heuristic.findings import Finding, Role
from diagnosis_server.agents.heuristic.observations import Observation


def test_every_analyzer_module_is_registered_once() -> None:
    found = []
    for module in pkgutil.iter_modules(analyzers.__path__):
        loaded = importlib.import_module(f"{analyzers.__name__}.{module.name}")
        if callable(getattr(loaded, "analyze", None)):
            found.append(loaded.analyze)
    assert found and set(found) <= set(ANALYZERS)
    assert len(set(ANALYZERS)) == len(ANALYZERS)


def test_every_analyzer_is_evidence_to_findings_and_detect_runs_them_all() -> None:
    """One signature, one list: ``detect`` has no entry point of its own."""
    import inspect

    from diagnosis_server.agents.heuristic import diagnosis

    for analyze in ANALYZERS:
        [parameter] = inspect.signature(analyze).parameters.values()
        assert parameter.annotation in ("Evidence", Evidence)
    called: list[str] = []

    def spy(evidence: Evidence) -> list[Finding]:
        called.append(",".join(evidence.subjects))
        return []

    import diagnosis_server.agents.heuristic.analyzers.registry as registry

    original = registry.ANALYZERS
    try:
        registry.ANALYZERS = (spy,)
        assert diagnosis.detect([_services()], ["cartservice"]) == [] and called == ["cartservice"]
    finally:
        registry.ANALYZERS = original


SERVICE: dict[str, Any] = {
    "metadata": {"name": "cartservice", "namespace": "shop"},
    "spec": {"selector": {"app": "cart-service"}, "ports": [{"port": 7070, "targetPort": 7070}]},
}
POD: dict[str, Any] = {
    "metadata": {"name": "cartservice-6d8f7b9c4d-q2x7z", "namespace": "shop", "labels": {"app": "cartservice"}},
    "spec": {"containers": [{"name": "server", "ports": [{"containerPort": 7070}]}]},
    "status": {"phase": "Running"},
}


def _obs(step: int, tool: str, arguments: dict[str, Any], output: dict[str, Any]) -> Observation:
    return Observation(step, tool, arguments, f"inv-{step}", output)


def _services() -> Observation:
    return _obs(
        0, "kubernetes.list", {"kind": "services", "namespace": "shop"}, {"kind": "ServiceList", "items": [SERVICE]}
    )


def test_a_selector_matching_no_listed_pod_is_stated_with_both_objects_bound() -> None:
    pods = _obs(1, "kubernetes.pods", {"namespace": "shop"}, {"kind": "PodList", "items": [POD]})
    findings = analyze_all([_services(), pods])
    [finding] = [f for f in findings if f.kind == "selector_mismatch"]
    assert finding.service == "cartservice"
    assert "app=cart-service" in finding.statement and "app=cartservice" in finding.statement
    paths = {(b.invocation_id, b.raw_path, b.matched_text) for b in finding.bindings}
    assert ("inv-0", "/items/0/spec/selector/app", "cart-service") in paths
    assert ("inv-1", "/items/0/metadata/labels/app", "cartservice") in paths


def test_no_absence_is_stated_from_a_narrowed_pod_list() -> None:
    narrowed = _obs(
        1,
        "kubernetes.pods",
        {"namespace": "shop", "label_selector": "app=cart-service"},
        {"kind": "PodList", "items": []},
    )
    evidence = Evidence.of([_services(), narrowed])
    assert not evidence.listed("Pod", "shop")
    assert analyze_all([_services(), narrowed]) == []


def test_an_object_read_twice_is_one_view_and_a_cluster_scoped_list_is_whole_everywhere() -> None:
    node = {"metadata": {"name": "worker-1"}, "spec": {"unschedulable": True}}
    first = _obs(0, "kubernetes.list", {"kind": "nodes"}, {"kind": "NodeList", "items": [node]})
    again = _obs(1, "kubernetes.get", {"kind": "nodes", "name": "worker-1"}, {"kind": "Node", **node})
    evidence = Evidence.of([first, again])
    assert [o.obs.invocation_id for o in evidence.objects("Node")] == ["inv-0"]
    assert evidence.listed("Node", "shop") and evidence.listed("Node")


def test_no_absence_is_stated_from_a_list_trimmed_to_the_output_bound_or_with_a_page_left() -> None:
    items: dict[str, Any] = {"kind": "PodList", "items": [POD]}
    trimmed = Observation(1, "kubernetes.pods", {"namespace": "shop"}, "inv-1", items, truncated=True)
    paged = _obs(1, "kubernetes.pods", {"namespace": "shop"}, {**items, "metadata": {"continue": "eyJ2IjoibWV0YSJ9"}})
    for pods in (trimmed, paged):
        assert not Evidence.of([_services(), pods]).listed("Pod", "shop")
        # (the pod listed runs: healthy evidence of it, and no more)
        assert [f.role for f in analyze_all([_services(), pods])] == [Role.HEALTHY]


def test_an_analyzer_that_fails_on_an_odd_object_costs_its_findings_not_the_others(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from diagnosis_server.agents.heuristic.analyzers import registry, service_routing

    def broken(evidence: Evidence) -> list[Finding]:
        raise TypeError("an object of a shape it did not expect")

    monkeypatch.setattr(registry, "ANALYZERS", (broken, service_routing.analyze))
    pods = _obs(1, "kubernetes.pods", {"namespace": "shop"}, {"kind": "PodList", "items": [POD]})
    assert [f.kind for f in registry.analyze_all([_services(), pods])] == ["selector_mismatch"]


ODD: list[Any] = [
    None,
    "text",
    {"metadata": "x"},
    {"metadata": {"name": "a", "namespace": "shop", "labels": ["app"]}, "spec": {"selector": "app=a", "ports": "80"}},
    {"metadata": {"name": "b", "namespace": "shop"}, "spec": {"ports": [{"targetPort": {"x": 1}}], "selector": {}}},
    {"metadata": {"name": "c", "namespace": "shop"}, "status": {"conditions": "Ready", "containerStatuses": [None, 3]}},
]


@pytest.mark.parametrize("kind", ["services", "pods", "nodes", "events", "replicasets", "deployments"])
def test_odd_shapes_of_every_kind_give_no_crash(kind: str) -> None:
    plural = {"services": "Service", "pods": "Pod", "nodes": "Node", "events": "Event"}.get(kind, kind)
    outputs = [
        _obs(0, "kubernetes.list", {"kind": kind, "namespace": "shop"}, {"kind": f"{plural}List", "items": ODD}),
        _obs(1, "kubernetes.pods", {"namespace": "shop"}, {"kind": "PodList", "items": ODD}),
        _obs(2, "kubernetes.events", {"namespace": "shop"}, {"kind": "EventList", "items": ODD}),
    ]
    for finding in analyze_all(outputs):
        assert finding.bindings
