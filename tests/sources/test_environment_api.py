"""A full Diagnose through the gRPC API on a configured environment (Kubernetes and Loki on recorded servers, a
Prometheus that is down, an MCP server over stdio), with a minimal provider that calls the tools: the invocations
recorded, ListToolInvocations and ListEnvironments, the request rules, and no secret in the database or the logs."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest

from diagnosis.v1 import contracts_pb2, diagnosis_service_pb2_grpc, run_pb2
from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis_server.agents.base import Agent, AgentReply, AgentRequest, AgentRole
from diagnosis_server.api import RunningServer, start_server
from diagnosis_server.conversions import from_value
from diagnosis_server.settings import load_settings
from tests.support.fakes import oom_evidence, verify_pass
from tests.support.server_log import server_log_buffer

from . import k8s_recorded as rec
from .conftest import MCP_SERVER, free_port, write_kubeconfig
from .fake_http import FakeUpstream
from .test_loki import LOKI_TOKEN, _loki

POD = "checkout-api-7f9c6d8b5-tr6zn"
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("kubernetes.pods", {"label_selector": "app=checkout-api"}),
    ("kubernetes.pod_logs", {"pod": POD, "previous": True}),
    ("loki.query_range", {"query": '{app="checkout-api"} |= "rror"'}),
    ("prometheus.query", {"query": 'sum(rate(http_requests_total{code="500"}[5m]))'}),
    ("mcp.tools.alert_rules", {"service": "checkout-api"}),
]
REASON_PATH = "/items/0/status/containerStatuses/0/lastState/terminated/reason"


class _Agent:
    def __init__(self, role: AgentRole) -> None:
        self._role = role

    async def run(self, request: AgentRequest) -> AgentReply:
        data = json.loads(request.input_bytes)
        if self._role == "planner":
            offered = {tool["name"] for tool in data["tools"]}
            if "environment" in data["context"]:
                assert data["context"]["environment"] == "prod" and "now" in data["context"]
            steps = [
                {"tool_name": name, "arguments": args, "purpose": "look"} for name, args in CALLS if name in offered
            ]
            return AgentReply(text=json.dumps({"steps": steps}), model="test")
        if self._role == "executor":
            assert request.tools is not None
            offered = {tool["name"] for tool in data["tools"]}
            results = {name: await request.tools.call(name, args) for name, args in CALLS if name in offered}
            pods = results.get("kubernetes.pods") or next(iter(results.values()))
            evidence = oom_evidence(pods.invocation_id, "kubernetes.pods", REASON_PATH)
            return AgentReply(text=evidence, model="test")
        if self._role == "verifier":
            return AgentReply(text=verify_pass(request.input_bytes, rationale="in the pod status"))
        facts = [{"text": f["statement"], "claim_ids": [f["claim_id"]]} for f in data["confirmed_facts"]]
        return AgentReply(text=json.dumps({"summary": "checkout-api pods are OOMKilled", "confirmed_facts": facts}))


class ToolCallingProvider:
    name = "tool-calling"

    def agent(self, role: AgentRole) -> Agent:
        return _Agent(role)


@dataclass
class Served:
    running: RunningServer
    stub: diagnosis_service_pb2_grpc.DiagnosisServiceAsyncStub
    database: Path
    prometheus_url: str


@pytest.fixture
def server_log() -> Iterator[io.StringIO]:
    with server_log_buffer() as buffer:
        yield buffer


@pytest.fixture
async def served(tmp_path: Path, server_log: io.StringIO, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Served]:
    for name in list(__import__("os").environ):
        if name.startswith("DIAGNOSIS_"):
            monkeypatch.delenv(name)
    cluster, loki = FakeUpstream(rec.Cluster()), FakeUpstream(_loki)
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", cluster.url)
    (tmp_path / "loki-token").write_text(LOKI_TOKEN)
    prometheus_url = f"http://scraper:prom-pass-99@127.0.0.1:{free_port()}"
    (tmp_path / "environments.toml").write_text(
        f"""
[environments.prod]
default = true
prometheus = {{ url = "{prometheus_url}" }}
loki = {{ url = "{loki.url}", tenant = "team-a", bearer_token_file = "loki-token" }}
kubernetes = {{ kubeconfig = "{kubeconfig}", context = "test", namespaces = ["shop"] }}
[[environments.prod.mcp]]
name = "tools"
command = ["{sys.executable}", "{MCP_SERVER}", "stdio"]
tools = ["alert_rules"]

[environments.staging]
loki = {{ url = "{loki.url}", tenant = "team-a", bearer_token_file = "loki-token" }}
"""
    )
    database = tmp_path / "api.db"
    settings = load_settings(
        address="127.0.0.1:0",
        database_url=f"sqlite+aiosqlite:///{database}",
        metrics_address="",
        http_address="",
        environments_file=str(tmp_path / "environments.toml"),
    )
    running = await start_server(settings, provider=ToolCallingProvider())
    channel = grpc.aio.insecure_channel(running.target)
    try:
        yield Served(running, diagnosis_service_pb2_grpc.DiagnosisServiceStub(channel), database, prometheus_url)
    finally:
        await channel.close()
        await running.stop(grace=2.0)
        cluster.close()
        loki.close()


async def _diagnose(stub: Any, **context: str) -> run_pb2.DiagnosisRun:
    request = pb.DiagnoseRequest(
        question="Why is checkout-api failing?",
        context=pb.RequestContext(scenario=context.get("scenario", ""), environment=context.get("environment", "")),
    )
    messages = [m async for m in stub.Diagnose(request)]
    return messages[-1].run  # type: ignore[no-any-return]


async def test_a_run_on_an_environment_records_every_call_and_lists_them(
    served: Served, server_log: io.StringIO
) -> None:
    run = await _diagnose(served.stub, environment="prod")
    assert run.status == run_pb2.RUN_STATUS_SUCCESS and run.verdict == contracts_pb2.VERDICT_PASS, run.failure_reason
    assert run.environment == "prod" and run.scenario == ""
    checked = run.self_evaluation.verifier_evaluation.gatekeeper_result.checked_bindings
    assert [(c.tool_name, c.raw_path, c.passed) for c in checked] == [("kubernetes.pods", REASON_PATH, True)]

    listed = await served.stub.ListToolInvocations(pb.ListToolInvocationsRequest(run_id=run.run_id))
    assert [i.tool_name for i in listed.invocations] == [name for name, _ in CALLS]
    assert not listed.next_page_token
    statuses = {i.tool_name: i for i in listed.invocations}
    ok = contracts_pb2.TOOL_INVOCATION_STATUS_OK
    assert all(statuses[name].status == ok for name in ("kubernetes.pods", "kubernetes.pod_logs", "loki.query_range"))
    assert statuses["mcp.tools.alert_rules"].status == ok
    down = statuses["prometheus.query"]
    assert down.status == contracts_pb2.TOOL_INVOCATION_STATUS_ERROR
    assert down.error.startswith("prometheus.query: cannot reach http://127.0.0.1:") and "prom-pass" not in down.error
    # The metrics: every call by tool and status, the Prometheus that is down as that source's error.
    metrics = served.running.metrics
    assert metrics.tool_calls.labels(tool="prometheus.query", status="ERROR")._value.get() == 1
    assert metrics.tool_calls.labels(tool="mcp.tools.alert_rules", status="OK")._value.get() == 1
    assert metrics.source_errors.labels(source="prometheus", error_class="unreachable")._value.get() == 1
    assert metrics.source_errors.labels(source="kubernetes", error_class="unreachable")._value.get() == 0
    pods: Any = from_value(statuses["kubernetes.pods"].output)
    assert pods["items"][0]["status"]["containerStatuses"][0]["lastState"]["terminated"]["reason"] == "OOMKilled"

    # Paged: two at a time, the same invocations in the same order.
    paged, token = [], ""
    while True:
        page = await served.stub.ListToolInvocations(
            pb.ListToolInvocationsRequest(run_id=run.run_id, page_size=2, page_token=token)
        )
        paged += [i.invocation_id for i in page.invocations]
        token = page.next_page_token
        if not token:
            break
    assert paged == [i.invocation_id for i in listed.invocations]

    # No secret of the fixtures reaches the database file or the logs.
    stored = b"".join(p.read_bytes() for p in served.database.parent.glob("api.db*"))
    log_text = server_log.getvalue()
    for secret in (*rec.SECRETS, LOKI_TOKEN, "prom-pass-99", "hunter2-prod"):
        assert secret.encode() not in stored, secret
        assert secret not in log_text, secret


async def test_list_environments_shows_names_tools_and_no_credentials(served: Served) -> None:
    response = await served.stub.ListEnvironments(pb.ListEnvironmentsRequest())
    by_name = {env.name: env for env in response.environments}
    assert list(by_name) == ["prod", "staging"]
    assert by_name["prod"].is_default and not by_name["staging"].is_default
    assert list(by_name["prod"].tool_names) == [
        "prometheus.query",
        "prometheus.query_range",
        "prometheus.series",
        "prometheus.label_values",
        "loki.query_range",
        "kubernetes.pods",
        "kubernetes.events",
        "kubernetes.pod_logs",
        "kubernetes.rollouts",
        "kubernetes.list",
        "kubernetes.get",
        "mcp.tools.alert_rules",
    ]
    endpoints = {s.kind: s.endpoint for s in by_name["prod"].sources}
    assert endpoints["prometheus"] == served.prometheus_url.replace("scraper:prom-pass-99@", "")
    assert "prom-pass" not in response.SerializeToString().decode("utf-8", errors="replace")


async def test_request_rules_for_scenario_and_environment(served: Served) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as both:
        await _diagnose(served.stub, environment="prod", scenario="checkout-oom")
    assert both.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert both.value.details() == "context: set scenario or environment, not both"
    with pytest.raises(grpc.aio.AioRpcError) as unknown:
        await _diagnose(served.stub, environment="qa")
    assert unknown.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert unknown.value.details() == "context.environment: unknown environment 'qa' (known: prod, staging)"
    # Neither: the default environment.
    default = await _diagnose(served.stub)
    assert default.environment == "prod"
    # A scenario still runs on its recorded pack (the pack answers the live tool names it has data for).
    recorded = await _diagnose(served.stub, scenario="checkout-oom")
    assert recorded.environment == "" and recorded.scenario == "checkout-oom"
    listed = await served.stub.ListToolInvocations(pb.ListToolInvocationsRequest(run_id=recorded.run_id))
    by_tool = {i.tool_name: i for i in listed.invocations}
    assert list(by_tool) == ["loki.query_range", "prometheus.query"]
    assert by_tool["loki.query_range"].status == contracts_pb2.TOOL_INVOCATION_STATUS_OK
    assert "a recorded incident answers plain series selectors only" in by_tool["prometheus.query"].error


async def test_list_tool_invocations_errors(served: Served) -> None:
    run = await _diagnose(served.stub, environment="prod")
    with pytest.raises(grpc.aio.AioRpcError) as missing:
        await served.stub.ListToolInvocations(pb.ListToolInvocationsRequest(run_id="run-nope"))
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND
    page = await served.stub.ListToolInvocations(pb.ListToolInvocationsRequest(run_id=run.run_id, page_size=1))
    other = await _diagnose(served.stub, environment="prod")
    with pytest.raises(grpc.aio.AioRpcError) as foreign:
        await served.stub.ListToolInvocations(
            pb.ListToolInvocationsRequest(run_id=other.run_id, page_token=page.next_page_token)
        )
    assert foreign.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "another run" in (foreign.value.details() or "")
