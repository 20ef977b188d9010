"""A workload whose pods run, whose callers cannot resolve its name, and whose namespace's Services, listed whole,
hold none of that name: its Service is missing (and a services quota at its limit says why), stated with the
objects and the caller's line bound (issue: the whole cluster)."""

from __future__ import annotations

from typing import Any

from diagnosis_server.agents.heuristic.analyzers import service_missing
from diagnosis_server.agents.heuristic.analyzers.evidence import Evidence
from diagnosis_server.agents.heuristic.observations import Observation

NS = "boutique"
LINE = "ERROR could not retrieve cart: dial tcp: lookup cartservice on 10.96.0.10:53: no such host"


def _observations(services: list[Any], *, selector: str | None = None, line: str = LINE) -> list[Observation]:
    pods: list[Any] = [
        {"metadata": {"name": "cartservice-cdj8hbz25p-kzdrb", "namespace": NS, "labels": {"app": "cartservice"}}},
        {
            "metadata": {"name": "frontend-9lvtb4gs22-dmkjs", "namespace": NS, "labels": {"app": "frontend"}},
            "spec": {"containers": [{"name": "server", "env": [{"name": "CART_ADDR", "value": "cartservice:7070"}]}]},
        },
    ]
    quota: Any = {
        "metadata": {"name": "object-counts", "namespace": NS},
        "status": {"hard": {"services": "12"}, "used": {"services": "12"}},
    }
    listing: dict[str, Any] = {"kind": "services", "namespace": NS}
    if selector is not None:
        listing["label_selector"] = selector
    logs: Any = {"pod": "frontend-9lvtb4gs22-dmkjs", "container": "server", "lines": [line]}
    return [
        Observation(0, "kubernetes.pods", {"namespace": NS}, "inv-0", {"kind": "PodList", "items": pods}),
        Observation(1, "kubernetes.list", listing, "inv-1", {"kind": "ServiceList", "items": services}),
        Observation(2, "kubernetes.list", {"kind": "resourcequotas", "namespace": NS}, "inv-2", {"items": [quota]}),
        Observation(3, "kubernetes.pod_logs", {"namespace": NS, "pod": "frontend-9lvtb4gs22-dmkjs"}, "inv-3", logs),
    ]


CANARY: Any = {"metadata": {"name": "cartservice-canary", "namespace": NS}, "spec": {"clusterIP": "10.96.188.41"}}


def test_a_running_workload_whose_name_does_not_resolve_and_has_no_service_is_missing_its_service() -> None:
    found = service_missing.analyze(Evidence.of(_observations([CANARY])))
    assert [f.service for f in found] == ["cartservice"]
    statement = found[0].statement
    assert "Service cartservice does not exist in namespace boutique" in statement
    assert "frontend, configured with CART_ADDR=cartservice:7070, cannot resolve it" in statement
    assert "quota object-counts has 12 of 12 services used" in statement
    bound = {b.matched_text for b in found[0].bindings}
    assert {"cartservice", "CART_ADDR", "cartservice:7070", "object-counts", "12"} <= bound


def test_a_service_that_exists_or_a_list_not_read_whole_says_nothing() -> None:
    existing: Any = {"metadata": {"name": "cartservice", "namespace": NS}, "spec": {}}
    assert service_missing.analyze(Evidence.of(_observations([CANARY, existing]))) == []
    # Only Services with a label were listed: an absent name may still exist.
    assert service_missing.analyze(Evidence.of(_observations([CANARY], selector="tier=web"))) == []


def test_a_name_no_pod_has_is_not_a_missing_service() -> None:
    line = "ERROR dial tcp: lookup shipping-service on 10.96.0.10:53: no such host"
    assert service_missing.analyze(Evidence.of(_observations([CANARY], line=line))) == []
