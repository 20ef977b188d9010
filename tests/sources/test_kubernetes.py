"""The Kubernetes tools through the official client on the real protocol, against a loopback API server that
answers from recorded responses: shapes, selectors, namespaces, redaction, 403, 404, 410 and a huge list."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest

from diagnosis.v1 import contracts_pb2
from diagnosis_server.conversions import canonical_json_bytes, from_value
from diagnosis_server.sources.registry import EnvironmentRegistry

from . import k8s_recorded as rec
from .conftest import free_port, write_kubeconfig
from .fake_http import FakeUpstream
from .helpers import call, opened

OK = contracts_pb2.TOOL_INVOCATION_STATUS_OK
ERROR = contracts_pb2.TOOL_INVOCATION_STATUS_ERROR
TRUNCATED = contracts_pb2.TOOL_INVOCATION_STATUS_TRUNCATED


@pytest.fixture
def cluster() -> Iterator[tuple[FakeUpstream, rec.Cluster]]:
    behaviour = rec.Cluster()
    upstream = FakeUpstream(behaviour)
    yield upstream, behaviour
    upstream.close()


def _env(kubeconfig: Path, namespaces: str = '["shop", "payments"]') -> str:
    return (
        "[environments.prod]\n"
        f'kubernetes = {{ kubeconfig = "{kubeconfig}", context = "test", namespaces = {namespaces} }}\n'
    )


def prod_registry(upstream: FakeUpstream, tmp_path: Path) -> AbstractAsyncContextManager[EnvironmentRegistry]:
    """The registry of the one environment, prod, whose kubeconfig points at the fake API server."""
    return opened(tmp_path, _env(write_kubeconfig(tmp_path / "kubeconfig", upstream.url)))


def _assert_no_secret(invocation: contracts_pb2.ToolInvocation) -> None:
    data = invocation.SerializeToString()
    for secret in rec.SECRETS:
        assert secret.encode() not in data, secret


async def test_pods_are_the_pod_list_as_returned_with_secrets_redacted(
    cluster: tuple[FakeUpstream, rec.Cluster], tmp_path: Path
) -> None:
    upstream, _ = cluster
    async with prod_registry(upstream, tmp_path) as registry:
        env = registry.get("prod")
        assert env.toolset.names == (
            "kubernetes.pods",
            "kubernetes.events",
            "kubernetes.pod_logs",
            "kubernetes.rollouts",
            "kubernetes.list",
            "kubernetes.get",
        )
        schema: Any = env.toolset.get("kubernetes.pods").input_schema  # type: ignore[union-attr]
        assert schema["properties"]["namespace"]["enum"] == ["shop", "payments"]
        invocation = await call(env.toolset, "kubernetes.pods", {"label_selector": "app=checkout-api"})
    assert invocation.status == OK, invocation.error
    request = upstream.requests[-1]
    assert request.path == "/api/v1/namespaces/shop/pods"
    assert request.query["labelSelector"] == "app=checkout-api" and request.query["limit"] == "500"
    body: Any = from_value(invocation.output)
    assert body["kind"] == "PodList" and len(body["items"]) == 2
    crashed = body["items"][0]
    status = crashed["status"]["containerStatuses"][0]
    assert status["lastState"]["terminated"]["reason"] == "OOMKilled" and status["restartCount"] == 6
    assert status["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert "managedFields" not in crashed["metadata"]
    assert "kubectl.kubernetes.io/last-applied-configuration" not in crashed["metadata"]["annotations"]
    assert crashed["metadata"]["annotations"]["example.com/bootstrap-token"] == "[REDACTED]"
    container = crashed["spec"]["containers"][0]
    # An address stays (where the workload calls), a password does not.
    assert [e["value"] for e in container["env"] if "value" in e] == ["orders-db.shop.svc", "[REDACTED]"]
    assert container["env"][2]["valueFrom"]["secretKeyRef"] == {"name": "[REDACTED]", "key": "[REDACTED]"}
    assert crashed["spec"]["imagePullSecrets"] == [{"name": "[REDACTED]"}]
    # What is evidence stays: the image digest, the limits.
    assert status["imageID"].endswith("sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")
    assert container["resources"]["limits"]["memory"] == "512Mi"
    _assert_no_secret(invocation)


async def test_events_logs_and_rollouts(cluster: tuple[FakeUpstream, rec.Cluster], tmp_path: Path) -> None:
    upstream, _ = cluster
    async with prod_registry(upstream, tmp_path) as registry:
        toolset = registry.tools_for("prod").toolset
        events = await call(toolset, "kubernetes.events", {"field_selector": "type=Warning"})
        logs = await call(
            toolset, "kubernetes.pod_logs", {"pod": "checkout-api-7f9c6d8b5-tr6zn", "previous": True, "tail_lines": 3}
        )
        rollouts = await call(toolset, "kubernetes.rollouts", {"deployment": "checkout-api"})
    assert events.status == OK, events.error
    event: Any = from_value(events.output)
    assert [e["reason"] for e in event["items"]] == ["BackOff"] and event["items"][0]["count"] == 7
    assert logs.status == OK, logs.error
    log_query = next(r for r in upstream.requests if r.path.endswith("/log"))
    assert log_query.query == {"previous": "true", "tailLines": "3"}
    log: Any = from_value(logs.output)
    assert log["pod"] == "checkout-api-7f9c6d8b5-tr6zn" and log["previous"] is True
    assert log["lines"][-1] == "2024-11-29T13:51:36.001Z ERROR java.lang.OutOfMemoryError: Java heap space"
    assert log["lines"][0] == "2024-11-29T13:51:31.002Z DEBUG calling payments with Authorization: Bearer [REDACTED]"
    assert rollouts.status == OK, rollouts.error
    replicas: Any = from_value(rollouts.output)
    assert replicas["kind"] == "ReplicaSetList"
    revisions = [
        (
            r["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
            r["spec"]["template"]["spec"]["containers"][0]["image"],
        )
        for r in replicas["items"]
    ]
    assert revisions == [
        ("13", "registry.example.com/shop/checkout-api:2.13.4"),
        ("14", "registry.example.com/shop/checkout-api:2.14.0"),
    ]
    for invocation in (events, logs, rollouts):
        _assert_no_secret(invocation)


async def test_api_errors_are_recorded_with_the_api_server_message(
    cluster: tuple[FakeUpstream, rec.Cluster], tmp_path: Path
) -> None:
    upstream, _ = cluster
    async with prod_registry(upstream, tmp_path) as registry:
        toolset = registry.tools_for("prod").toolset
        forbidden = await call(toolset, "kubernetes.pods", {"namespace": "payments"})
        missing = await call(toolset, "kubernetes.pod_logs", {"pod": "checkout-api-gone"})
        outside = await call(toolset, "kubernetes.pods", {"namespace": "kube-system"})
    assert forbidden.status == ERROR
    assert forbidden.error.startswith('kubernetes.pods: 403 Forbidden: pods is forbidden: User "system:serviceaccount')
    assert (
        missing.status == ERROR
        and missing.error == 'kubernetes.pod_logs: 404 NotFound: pods "checkout-api-gone" not found'
    )
    assert outside.status == ERROR and "must be one of shop, payments" in outside.error
    assert not any(r.path.startswith("/api/v1/namespaces/kube-system") for r in upstream.requests)


async def test_a_huge_pod_list_is_paged_then_trimmed_to_the_cap(tmp_path: Path) -> None:
    behaviour = rec.Cluster(huge_pods=1200, expire_once=True)
    upstream = FakeUpstream(behaviour)
    try:
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", upstream.url)
        async with opened(tmp_path, _env(kubeconfig, '["shop"]')) as registry:
            invocation = await call(registry.tools_for("prod").toolset, "kubernetes.pods", {})
    finally:
        upstream.close()
    # Pages of 500; the second page's continue token had expired (410): the list restarted once from the top.
    continues = [r.query.get("continue", "") for r in upstream.requests]
    assert continues == ["", "500", "", "500", "1000"]
    assert invocation.status == TRUNCATED
    body: Any = from_value(invocation.output)
    kept = len(body["items"])
    assert 0 < kept < 1200 and body["items"][0]["metadata"]["name"] == "checkout-api-7f9c6d8b5-00000"
    assert invocation.error == f"trimmed to fit 262144 bytes: /items kept {kept} of 1200 items"
    assert len(canonical_json_bytes(body)) <= 262144
    _assert_no_secret(invocation)


async def test_an_api_server_that_is_down_makes_the_tools_fail_recorded(tmp_path: Path) -> None:
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", f"http://127.0.0.1:{free_port()}")
    async with opened(tmp_path, _env(kubeconfig)) as registry:
        invocation = await call(registry.tools_for("prod").toolset, "kubernetes.events", {})
    assert invocation.status == ERROR
    assert invocation.error.startswith("kubernetes.events: cannot reach the API server http://127.0.0.1:")
