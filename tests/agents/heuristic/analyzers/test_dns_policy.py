"""A workload whose pods do not ask the cluster DNS while its lookups fail: the pod's dnsPolicy is the cause, stated
with the setting, the cluster DNS Service and the line bound (issue: the whole cluster, service routing)."""

from __future__ import annotations

from typing import Any

from diagnosis_server.agents.heuristic.analyzers import dns_policy
from diagnosis_server.agents.heuristic.analyzers.evidence import Evidence
from diagnosis_server.agents.heuristic.observations import Observation

NS = "shop"
LINE = "dial tcp: lookup cartservice on 169.254.169.253:53: no such host"
KUBE_DNS: Any = {"metadata": {"name": "kube-dns", "namespace": "kube-system"}, "spec": {"clusterIP": "10.96.0.10"}}


def _observations(spec: dict[str, Any], *, namespace: str = NS, line: str = LINE) -> list[Observation]:
    pod: Any = {
        "metadata": {"name": "frontend-7d9c8b6f5-k2x9q", "namespace": namespace, "labels": {"app": "frontend"}},
        "spec": {"containers": [{"name": "server"}], **spec},
    }
    logs: Any = {"pod": "frontend-7d9c8b6f5-k2x9q", "container": "server", "lines": [line]}
    services: Any = {"kind": "ServiceList", "items": [KUBE_DNS]}
    return [
        Observation(0, "kubernetes.pods", {"namespace": namespace}, "inv-0", {"kind": "PodList", "items": [pod]}),
        Observation(1, "kubernetes.list", {"kind": "services", "namespace": "kube-system"}, "inv-1", services),
        Observation(
            2, "kubernetes.pod_logs", {"namespace": namespace, "pod": "frontend-7d9c8b6f5-k2x9q"}, "inv-2", logs
        ),
    ]


def test_a_pod_on_the_nodes_resolver_whose_lookups_fail_is_the_cause() -> None:
    [found] = dns_policy.analyze(Evidence.of(_observations({"dnsPolicy": "Default"})))
    assert found.service == "frontend" and found.kind == "dns_policy"
    assert "has dnsPolicy Default" in found.statement
    assert "the cluster DNS Service kube-dns is 10.96.0.10" in found.statement
    bound = {(b.invocation_id, b.raw_path) for b in found.bindings}
    assert {("inv-0", "/items/0/spec/dnsPolicy"), ("inv-1", "/items/0/spec/clusterIP"), ("inv-2", "/lines/0")} <= bound


def test_dns_policy_none_with_another_nameserver_and_host_network_are_elsewhere_too() -> None:
    none = {"dnsPolicy": "None", "dnsConfig": {"nameservers": ["8.8.8.8"]}}
    [found] = dns_policy.analyze(Evidence.of(_observations(none)))
    assert "dnsPolicy None with nameserver 8.8.8.8" in found.statement
    host = {"dnsPolicy": "ClusterFirst", "hostNetwork": True}
    [found] = dns_policy.analyze(Evidence.of(_observations(host)))
    assert "hostNetwork true with dnsPolicy ClusterFirst" in found.statement


def test_the_cluster_dns_the_control_plane_or_no_failed_lookup_say_nothing() -> None:
    for spec in (
        {"dnsPolicy": "ClusterFirst"},
        {},
        {"dnsPolicy": "None", "dnsConfig": {"nameservers": ["10.96.0.10"]}},
    ):
        assert dns_policy.analyze(Evidence.of(_observations(spec))) == []
    assert dns_policy.analyze(Evidence.of(_observations({"dnsPolicy": "Default"}, namespace="kube-system"))) == []
    assert dns_policy.analyze(Evidence.of(_observations({"dnsPolicy": "Default"}, line="GET / 200"))) == []
