"""A Service whose port is a container port of its pods while its targetPort is another, and a caller that reports
a protocol error calling it: the Service's cause, with its ports, the containers' ports and the caller's line
bound (issue: the whole cluster)."""

from __future__ import annotations

from typing import Any

import pytest

from diagnosis_server.agents.heuristic.analyzers import port_protocol
from diagnosis_server.agents.heuristic.analyzers.evidence import Evidence
from diagnosis_server.agents.heuristic.observations import Observation

NS = "shop"
PREFACE = "error reading server preface: http2: frame too large"


def _observations(target: int, line: str) -> list[Observation]:
    pods: list[Any] = [
        {
            "metadata": {"name": "currencyservice-6f8d9b7c5-x2k8q", "namespace": NS, "labels": {"app": "currency"}},
            "spec": {
                "containers": [
                    {
                        "name": "server",
                        "ports": [{"name": "grpc", "containerPort": 7000}, {"name": "metrics", "containerPort": 9464}],
                    }
                ]
            },
        },
        {
            "metadata": {"name": "frontend-6c8d9bf7d4-x2k8q", "namespace": NS, "labels": {"app": "frontend"}},
            "spec": {"containers": [{"name": "server", "env": [{"name": "CURRENCY_ADDR", "value": "currency:7000"}]}]},
        },
    ]
    service: Any = {
        "metadata": {"name": "currency", "namespace": NS},
        "spec": {
            "clusterIP": "10.96.4.7",
            "selector": {"app": "currency"},
            "ports": [{"port": 7000, "targetPort": target}],
        },
    }
    logs: Any = {"pod": "frontend-6c8d9bf7d4-x2k8q", "container": "server", "lines": [line]}
    return [
        Observation(0, "kubernetes.pods", {"namespace": NS}, "inv-0", {"kind": "PodList", "items": pods}),
        Observation(1, "kubernetes.list", {"kind": "services", "namespace": NS}, "inv-1", {"items": [service]}),
        Observation(2, "kubernetes.pod_logs", {"namespace": NS, "pod": "frontend-6c8d9bf7d4-x2k8q"}, "inv-2", logs),
    ]


def test_a_service_sending_its_port_to_another_container_port_is_its_cause_when_callers_get_another_protocol() -> None:
    line = f'ERROR could not retrieve currencies: rpc error: code = Unavailable desc = "{PREFACE}"'
    found = port_protocol.analyze(Evidence.of(_observations(9464, line)))
    assert [f.service for f in found] == ["currency"]
    statement = found[0].statement
    assert "Service currency sends port 7000 to targetPort 9464, which the container of pod" in statement
    assert "names metrics, while the container" in statement and "serves port 7000 as grpc" in statement
    bound = {b.matched_text for b in found[0].bindings}
    assert {"currency", "7000", "9464", "metrics", "grpc", "CURRENCY_ADDR", "currency:7000"} <= bound


@pytest.mark.parametrize(
    ("target", "line"),
    [
        (7000, f"ERROR could not retrieve currencies: {PREFACE}"),  # the port is served where it should be
        (9464, "ERROR could not retrieve currencies: connection refused"),  # no protocol error
        (9464, f"ERROR could not retrieve ads: {PREFACE}"),  # a call to something else
    ],
)
def test_without_a_misrouted_port_or_a_protocol_error_calling_it_nothing_is_said(target: int, line: str) -> None:
    assert port_protocol.analyze(Evidence.of(_observations(target, line))) == []
