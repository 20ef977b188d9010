"""kubernetes.list and kubernetes.get, live (the official client against a loopback API server) and from a pack:
any kind by its plural name, List objects as returned, cluster-scoped kinds, the control plane's pods, a Secret's
keys without its values, and the API server's errors."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from diagnosis.v1 import contracts_pb2
from diagnosis_server.conversions import from_value
from diagnosis_server.sources.packs import pack_toolset
from diagnosis_server.tools.scenario import Scenario

from .conftest import write_kubeconfig
from .fake_http import FakeUpstream
from .helpers import call, opened
from .k8s_store import Store

OK = contracts_pb2.TOOL_INVOCATION_STATUS_OK
ERROR = contracts_pb2.TOOL_INVOCATION_STATUS_ERROR
DB_PASSWORD = "s3cr3t-Hunter2-horse-battery"
MANAGED = [{"manager": "kubectl-client-side-apply", "operation": "Update", "fieldsType": "FieldsV1", "fieldsV1": {}}]


def _meta(name: str, namespace: str | None = "shop", **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "uid": f"uid-{name}", "creationTimestamp": "2025-03-01T09:00:00Z", **extra}
    if namespace is not None:
        meta["namespace"] = namespace
    return meta


OBJECTS: dict[str, list[dict[str, Any]]] = {
    "services": [
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": _meta("cartservice", managedFields=MANAGED),
            "spec": {
                "selector": {"app": "cart-service"},
                "ports": [{"name": "grpc", "port": 7070, "targetPort": 7070, "protocol": "TCP"}],
                "type": "ClusterIP",
                "clusterIP": "10.96.41.7",
            },
            "status": {"loadBalancer": {}},
        }
    ],
    "nodes": [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": _meta("worker-1", None, labels={"kubernetes.io/hostname": "worker-1"}),
            "spec": {
                "unschedulable": True,
                "taints": [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}],
            },
            "status": {
                "conditions": [
                    {
                        "type": "Ready",
                        "status": "True",
                        "reason": "KubeletReady",
                        "message": "kubelet is posting ready status",
                        "lastHeartbeatTime": "2025-03-01T09:59:00Z",
                        "lastTransitionTime": "2025-03-01T08:00:00Z",
                    }
                ]
            },
        }
    ],
    "secrets": [
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": _meta(
                "cart-db",
                annotations={
                    "kubectl.kubernetes.io/last-applied-configuration": '{"stringData":{"password":"'
                    + DB_PASSWORD
                    + '"}}'
                },
            ),
            "type": "Opaque",
            "data": {"password": base64.b64encode(DB_PASSWORD.encode()).decode(), "user": "Y2FydA=="},
        }
    ],
    "pods": [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": _meta("kube-proxy-7xk2p", "kube-system", labels={"k8s-app": "kube-proxy"}),
            "spec": {
                "nodeName": "worker-1",
                "containers": [{"name": "kube-proxy", "image": "registry.k8s.io/kube-proxy:v1.31.2"}],
            },
            "status": {"phase": "Failed", "reason": "Evicted"},
        }
    ],
}
ENCODED = base64.b64encode(DB_PASSWORD.encode()).decode()


@pytest.fixture
def api_server() -> Iterator[FakeUpstream]:
    upstream = FakeUpstream(Store(OBJECTS))
    yield upstream
    upstream.close()


def _env(kubeconfig: Path) -> str:
    return (
        "[environments.prod]\n"
        f'kubernetes = {{ kubeconfig = "{kubeconfig}", context = "test", namespaces = ["shop"] }}\n'
    )


def _pack() -> Scenario:
    return Scenario.model_validate(
        {
            "name": "objects",
            "title": "objects",
            "description": "objects",
            "question": "Why does checkout fail?",
            "time_window": {"start": "2025-03-01T09:00:00Z", "end": "2025-03-01T10:00:00Z"},
            "topology": {"services": [{"name": "cartservice", "kind": "http", "labels": {"namespace": "shop"}}]},
            "kubernetes": OBJECTS,
        }
    )


def _assert_no_secret(invocation: contracts_pb2.ToolInvocation) -> None:
    data = invocation.SerializeToString()
    assert DB_PASSWORD.encode() not in data and ENCODED.encode() not in data


async def _live_calls(upstream: FakeUpstream, tmp_path: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    async with opened(tmp_path, _env(write_kubeconfig(tmp_path / "kubeconfig", upstream.url))) as registry:
        toolset = registry.get("prod").toolset
        assert "kubernetes.list" in toolset.names and "kubernetes.get" in toolset.names
        return [await call(toolset, tool, args) for tool, args in calls]


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("kubernetes.list", {"kind": "services"}),
    ("kubernetes.list", {"kind": "nodes", "namespace": "shop"}),
    ("kubernetes.get", {"kind": "secrets", "name": "cart-db"}),
    ("kubernetes.list", {"kind": "secrets"}),
    ("kubernetes.list", {"kind": "pods", "namespace": "kube-system", "label_selector": "k8s-app=kube-proxy"}),
    ("kubernetes.get", {"kind": "storageclasses", "name": "fast-ssd"}),
    ("kubernetes.list", {"kind": "configmaps", "namespace": "payments"}),
    ("kubernetes.list", {"kind": "widgets"}),
]


def _check(invocations: list[contracts_pb2.ToolInvocation]) -> None:
    services, nodes, secret, secrets, proxies, missing, outside, unknown = invocations
    for invocation in (services, nodes, secret, secrets, proxies):
        assert invocation.status == OK, invocation.error
        _assert_no_secret(invocation)
    body: Any = from_value(services.output)
    assert body["kind"] == "ServiceList" and body["items"][0]["spec"]["selector"] == {"app": "cart-service"}
    assert "managedFields" not in body["items"][0]["metadata"]
    node: Any = from_value(nodes.output)
    assert node["kind"] == "NodeList" and node["items"][0]["spec"]["unschedulable"] is True
    assert node["items"][0]["status"]["conditions"][0]["reason"] == "KubeletReady"
    one: Any = from_value(secret.output)
    assert one["type"] == "Opaque" and one["data"] == {"password": "[REDACTED]", "user": "[REDACTED]"}
    listed: Any = from_value(secrets.output)
    assert listed["items"][0]["data"] == {"password": "[REDACTED]", "user": "[REDACTED]"}
    proxy: Any = from_value(proxies.output)
    assert [p["metadata"]["name"] for p in proxy["items"]] == ["kube-proxy-7xk2p"]
    assert missing.status == ERROR and "404 NotFound" in missing.error and "fast-ssd" in missing.error
    assert outside.status == ERROR and "payments" in outside.error
    assert unknown.status == ERROR and "widgets" in unknown.error


async def test_live_list_and_get_read_any_kind_with_secret_values_never_recorded(
    api_server: FakeUpstream, tmp_path: Path
) -> None:
    invocations = await _live_calls(api_server, tmp_path, CALLS)
    _check(invocations)
    paths = [r.path for r in api_server.requests]
    assert "/api/v1/namespaces/shop/services" in paths and "/api/v1/nodes" in paths
    assert "/api/v1/namespaces/shop/secrets/cart-db" in paths
    assert "/apis/storage.k8s.io/v1/storageclasses/fast-ssd" in paths
    assert not any("payments" in p for p in paths), "a namespace outside the environment is never asked for"


async def test_a_pack_answers_list_and_get_of_the_same_objects_as_the_live_api() -> None:
    toolset = pack_toolset(_pack())
    invocations = [await call(toolset, tool, args) for tool, args in CALLS]
    _check(invocations)


async def test_pack_and_live_list_the_same_items(api_server: FakeUpstream, tmp_path: Path) -> None:
    toolset = pack_toolset(_pack())
    calls = CALLS[:5]
    live = await _live_calls(api_server, tmp_path, calls)
    for (tool, args), from_live in zip(calls, live, strict=True):
        recorded: Any = from_value((await call(toolset, tool, args)).output)
        answered: Any = from_value(from_live.output)
        if tool == "kubernetes.list":
            strip = [{k: v for k, v in item.items() if k not in ("kind", "apiVersion")} for item in recorded["items"]]
            assert strip == answered["items"], (tool, args)
            assert recorded["kind"] == answered["kind"]
        else:
            assert recorded == answered
