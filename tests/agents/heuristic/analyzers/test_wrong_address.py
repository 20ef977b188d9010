"""A workload configured with another service's address: a gRPC "unknown service" answer, one workload's setting
named like that service and addressing a workload that is not, stated with the setting and the line bound
(issue: the whole cluster, service routing)."""

from __future__ import annotations

from typing import Any

import pytest

from diagnosis_server.agents.heuristic.analyzers import wrong_address
from diagnosis_server.agents.heuristic.analyzers.evidence import Evidence
from diagnosis_server.agents.heuristic.observations import Observation

NS = "boutique"
GO = (
    "failed to complete the order: rpc error: code = Internal desc = failed to charge card: could not charge the "
    "card: rpc error: code = Unimplemented desc = unknown service hipstershop.PaymentService"
)
JAVA = "io.grpc.StatusRuntimeException: UNIMPLEMENTED: Method not found: hipstershop.PaymentService/Charge"


def _pod(name: str, app: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "server"}
    if env:
        container["env"] = [{"name": k, "value": v} for k, v in env.items()]
    return {"metadata": {"name": name, "namespace": NS, "labels": {"app": app}}, "spec": {"containers": [container]}}


def _observations(payment_addr: str, line: str = GO, *, also: dict[str, str] | None = None) -> list[Observation]:
    pods: list[Any] = [
        _pod("checkoutservice-7c9d8f6b5-x2x4q", "checkoutservice", {"PAYMENT_SERVICE_ADDR": payment_addr}),
        _pod("paymentservice-5d8b9c7f4-lq9zt", "paymentservice"),
        _pod("shippingservice-6f7d9b8c5-hm2kd", "shippingservice"),
        _pod("frontend-9lvtb4gs22-dmkjs", "frontend", also),
    ]
    logs: Any = {"pod": "frontend-9lvtb4gs22-dmkjs", "container": "server", "lines": [line]}
    return [
        Observation(0, "kubernetes.pods", {"namespace": NS}, "inv-0", {"kind": "PodList", "items": pods}),
        Observation(1, "kubernetes.pod_logs", {"namespace": NS, "pod": "frontend-9lvtb4gs22-dmkjs"}, "inv-1", logs),
    ]


@pytest.mark.parametrize("line", [GO, JAVA], ids=["grpc-go", "grpc-java"])
def test_a_setting_named_for_a_service_that_addresses_another_workload_is_the_cause(line: str) -> None:
    [found] = wrong_address.analyze(Evidence.of(_observations("shippingservice:50051", line)))
    assert found.service == "checkoutservice" and found.kind == "wrong_address"
    assert "its PAYMENT_SERVICE_ADDR is shippingservice:50051, an address of shippingservice" in found.statement
    assert "does not serve hipstershop.PaymentService" in found.statement
    assert "the payment workload is paymentservice" in found.statement
    bound = {(b.invocation_id, b.raw_path, b.matched_text) for b in found.bindings}
    assert ("inv-0", "/items/0/spec/containers/0/env/0/name", "PAYMENT_SERVICE_ADDR") in bound
    assert ("inv-0", "/items/0/spec/containers/0/env/0/value", "shippingservice:50051") in bound
    assert any(path == "/lines/0" and "hipstershop.PaymentService" in text for _, path, text in bound)


def test_a_setting_that_addresses_the_service_it_is_named_for_says_nothing() -> None:
    for address in ("paymentservice:50051", "payment-service.boutique.svc.cluster.local:50051"):
        assert wrong_address.analyze(Evidence.of(_observations(address))) == []


def test_no_unknown_service_answer_or_two_workloads_so_configured_say_nothing() -> None:
    assert wrong_address.analyze(Evidence.of(_observations("shippingservice:50051", "connection refused"))) == []
    both = _observations("shippingservice:50051", also={"PAYMENT_ADDR": "cartservice:7070"})
    assert wrong_address.analyze(Evidence.of(both)) == []
