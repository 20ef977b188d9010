"""A NetworkPolicy that admits no ingress from a workload configured to call its target, while calls to the
target time out: the target's cause, with the policy, its selectors and the caller's setting bound (issue: the
whole cluster)."""

from __future__ import annotations

from typing import Any

import pytest

from diagnosis_server.agents.heuristic.analyzers import network_policy
from diagnosis_server.agents.heuristic.analyzers.evidence import Evidence
from diagnosis_server.agents.heuristic.observations import Observation
from diagnosis_server.conversions import JsonObject, JsonValue

NS = "shop"
PAYMENT_IP = "10.96.158.216"


def _pod(name: str, app: str, env: list[JsonValue] | None = None) -> JsonValue:
    container: JsonObject = {"name": "server", "image": f"example/{app}:1.0"}
    if env is not None:
        container["env"] = env
    return {
        "metadata": {"name": name, "namespace": NS, "labels": {"app": app}},
        "spec": {"containers": [container]},
        "status": {
            "phase": "Running",
            "podIP": f"10.244.1.{len(name)}",
            "containerStatuses": [{"name": "server", "ready": True, "restartCount": 0}],
        },
    }


def _list(index: int, kind: str, items: list[JsonValue]) -> Observation:
    output: JsonObject = {"kind": "List", "items": items}
    return Observation(index, "kubernetes.list", {"kind": kind, "namespace": NS}, f"inv-{index}", output)


def _policy(
    *peers: JsonValue,
    types: tuple[str, ...] = ("Ingress",),
    rules: list[JsonValue] | None = None,
    chooser: JsonValue = None,
) -> Any:
    """paymentservice's ingress policy admitting ``frontend`` and ``peers``."""
    admitted: list[JsonValue] = [{"podSelector": {"matchLabels": {"app": "frontend"}}}, *peers]
    return {
        "metadata": {"name": "payment-ingress", "namespace": NS},
        "spec": {
            "podSelector": chooser if chooser is not None else {"matchLabels": {"app": "paymentservice"}},
            "policyTypes": list(types),
            "ingress": rules if rules is not None else [{"from": admitted}],
        },
    }


POLICY = _policy()
NAME = "kubernetes.io/metadata.name"
CHECKOUT = "checkoutservice"
TIMEOUT = f"ERROR could not charge the card: dial tcp {PAYMENT_IP}:50051: i/o timeout"


def _observations(policy: Any, line: str = TIMEOUT) -> list[Observation]:
    pods = [
        _pod("frontend-6c8d9bf7d4-x2k8q", "frontend"),
        _pod(
            "checkoutservice-6b5c4d7f8-pqrst",
            "checkoutservice",
            [{"name": "PAYMENT_ADDR", "value": "paymentservice:50051"}],
        ),
        _pod("paymentservice-66thcksnt-wl7h7", "paymentservice"),
    ]
    service: JsonValue = {
        "metadata": {"name": "paymentservice", "namespace": NS},
        "spec": {"clusterIP": PAYMENT_IP, "selector": {"app": "paymentservice"}, "ports": [{"port": 50051}]},
    }
    logs: JsonObject = {"pod": "frontend-6c8d9bf7d4-x2k8q", "container": "server", "lines": [line]}
    return [
        Observation(0, "kubernetes.pods", {"namespace": NS}, "inv-0", {"kind": "PodList", "items": pods}),
        _list(1, "services", [service]),
        _list(2, "networkpolicies", [policy]),
        Observation(3, "kubernetes.pod_logs", {"namespace": NS, "pod": "frontend-6c8d9bf7d4-x2k8q"}, "inv-3", logs),
    ]


def test_a_policy_admitting_no_caller_configured_for_the_target_is_the_targets_cause() -> None:
    found = network_policy.analyze(Evidence.of(_observations(POLICY)))
    assert len(found) == 1
    cause = found[0]
    assert cause.service == "paymentservice" and cause.kind == "network_policy"
    assert "network policy payment-ingress selects its pods by app=paymentservice" in cause.statement
    assert "admits ingress only from app=frontend; checkoutservice, configured with PAYMENT_ADDR" in cause.statement
    bound = {b.matched_text for b in cause.bindings}
    assert {"payment-ingress", "paymentservice", "frontend", "PAYMENT_ADDR", "paymentservice:50051"} <= bound


@pytest.mark.parametrize(
    "policy",
    [
        _policy({"podSelector": {"matchLabels": {"app": "checkoutservice"}}}),
        _policy({"namespaceSelector": {}}),  # every namespace, every pod
        _policy({"namespaceSelector": {"matchLabels": {"team": "shop"}}}),  # a label not read here: never a guess
        _policy({"namespaceSelector": {"matchLabels": {NAME: NS}}, "podSelector": {"matchLabels": {"app": CHECKOUT}}}),
        _policy({"podSelector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]}}),
        _policy({"podSelector": {"matchExpressions": [{"key": "app", "operator": "Matches"}]}}),  # not an operator
        _policy({"ipBlock": {"cidr": "10.0.0.0/8"}}),  # holds the callers' pod IPs
        _policy({"ipBlock": {"cidr": "not-a-cidr"}}),
        _policy(types=("Egress",)),
        _policy(rules=[{"ports": [{"port": 50051}]}]),  # a rule with no peers admits every source
    ],
)
def test_a_policy_that_admits_the_caller_or_cannot_be_read_says_nothing(policy: Any) -> None:
    assert network_policy.analyze(Evidence.of(_observations(policy))) == []


def test_without_a_timed_out_call_to_the_target_a_policy_is_no_cause() -> None:
    quiet = f"INFO charged the card via {PAYMENT_IP}:50051 in 12ms"
    assert network_policy.analyze(Evidence.of(_observations(POLICY, quiet))) == []


@pytest.mark.parametrize(
    ("policy", "said"),
    [
        (
            _policy(chooser={"matchExpressions": [{"key": "app", "operator": "In", "values": ["paymentservice"]}]}),
            "selects its pods by app in paymentservice",
        ),
        (
            _policy({"podSelector": {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": [CHECKOUT]}]}}),
            "app not in checkoutservice",
        ),
        (
            _policy(
                {"namespaceSelector": {"matchLabels": {NAME: "ops"}}, "podSelector": {"matchLabels": {"app": CHECKOUT}}}
            ),
            f"app=checkoutservice in namespaces {NAME}=ops",
        ),
        (_policy({"ipBlock": {"cidr": "192.168.0.0/16", "except": ["192.168.1.0/24"]}}), "ipBlock 192.168.0.0/16"),
        (_policy({"ipBlock": {"cidr": "10.244.0.0/16", "except": ["10.244.1.0/24"]}}), "ipBlock 10.244.0.0/16"),
    ],
)
def test_expressions_namespaces_and_ip_blocks_are_read_as_the_api_server_reads_them(policy: Any, said: str) -> None:
    """A selector's expressions, a namespace by its name label, a pod's IP against a block and its exceptions: a
    caller none of them admits is not admitted, and the statement says what the policy admits."""
    found = network_policy.analyze(Evidence.of(_observations(policy)))
    assert len(found) == 1 and found[0].service == "paymentservice", found
    assert said in found[0].statement
    bound = {b.matched_text for b in found[0].bindings}
    assert said.split()[-1].rpartition("=")[2] in bound
