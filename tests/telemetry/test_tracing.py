"""Traces and correlated logs of a real in-process server, read from the SDK's in-memory exporter."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import grpc
import grpc.aio
import pytest
import structlog
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis.v1 import diagnosis_service_pb2_grpc
from diagnosis_server.agents.base import Agent, AgentProvider, AgentReply, AgentRequest, AgentRetryableError, AgentRole
from diagnosis_server.api import configure_logging, start_server
from diagnosis_server.settings import load_settings
from diagnosis_server.telemetry import configure_tracing, tracing_wanted
from tests.support.fakes import PassProvider, tools_for
from tests.support.spans import recorded_spans

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_SPAN = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_SPAN}-01"


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    with recorded_spans() as memory:
        yield memory


class _FlakyPlanner:
    """The planner fails once (a line logged inside the run's task), then answers."""

    def __init__(self) -> None:
        self.inner = PassProvider()
        self.name = "flaky"
        self.failed = False

    def agent(self, role: AgentRole) -> Agent:
        agent = self.inner.agent(role)
        if role != "planner":
            return agent
        outer = self

        class Once:
            async def run(self, request: AgentRequest) -> AgentReply:
                if not outer.failed:
                    outer.failed = True
                    raise AgentRetryableError("busy", failure_class="http_503")
                return await agent.run(request)

        return Once()


async def _diagnose(
    tmp_path: Path, metadata: tuple[tuple[str, str], ...] = (), provider: AgentProvider | None = None
) -> pb.DiagnoseResponse:
    settings = load_settings(
        address="127.0.0.1:0",
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'trace.db'}",
        metrics_address="",
        http_address="",
        retry_backoff_s=0.01,
    )
    running = await start_server(settings, provider=provider or PassProvider(), tools_for=tools_for)
    try:
        async with grpc.aio.insecure_channel(running.target) as channel:
            stub = diagnosis_service_pb2_grpc.DiagnosisServiceStub(channel)
            request = pb.DiagnoseRequest(question="Why is checkout-api failing?")
            messages = [m async for m in stub.Diagnose(request, metadata=metadata)]
            invocations = await running.repository.list_tool_invocations(messages[-1].run.run_id)
            assert invocations
            return messages[-1]
    finally:
        await running.stop(grace=1)


def _by_name(spans: tuple[ReadableSpan, ...], prefix: str) -> list[ReadableSpan]:
    return [span for span in spans if span.name.startswith(prefix)]


async def test_a_diagnose_is_one_trace_continuing_the_callers_context(
    exporter: InMemorySpanExporter, tmp_path: Path
) -> None:
    final = await _diagnose(tmp_path, (("traceparent", TRACEPARENT),))
    spans = exporter.get_finished_spans()
    (server,) = _by_name(spans, "diagnosis.v1.DiagnosisService/Diagnose")
    assert server.kind == SpanKind.SERVER
    assert server.attributes is not None
    assert server.attributes["rpc.system"] == "grpc"
    assert server.attributes["rpc.service"] == "diagnosis.v1.DiagnosisService"
    assert server.attributes["rpc.method"] == "Diagnose"
    assert server.attributes["rpc.grpc.status_code"] == 0
    assert server.attributes["diagnosis.run_id"] == final.run.run_id
    assert server.attributes["network.peer.address"] == "127.0.0.1"
    assert format(server.context.trace_id, "032x") == TRACE_ID  # the caller's trace goes on
    assert server.parent is not None and format(server.parent.span_id, "016x") == PARENT_SPAN

    nodes = _by_name(spans, "node ")
    assert len(nodes) == len(final.run.orchestration_trace.path)
    assert all(format(s.context.trace_id, "032x") == TRACE_ID for s in nodes)
    assert all(s.parent is not None and s.parent.span_id == server.context.span_id for s in nodes)
    assert {s.attributes["diagnosis.outcome"] for s in nodes if s.attributes}  # outcome per attempt

    (tool,) = _by_name(spans, "execute_tool ")
    assert tool.attributes is not None
    stored = final.run.self_evaluation.verifier_evaluation.verified_evidence
    bound = {e.source_invocation_id for e in stored}
    assert tool.attributes["diagnosis.invocation_id"] in bound  # a binding resolves to its span
    assert tool.attributes["gen_ai.tool.name"] == "k8s.events"
    assert tool.attributes["diagnosis.tool.status"] == "OK"
    assert isinstance(tool.attributes["diagnosis.tool.duration_ms"], int)
    executor = next(s for s in nodes if s.attributes and s.attributes["diagnosis.node"] == "executor")
    assert tool.parent is not None and tool.parent.span_id == executor.context.span_id


async def test_without_a_caller_context_a_new_trace_starts(exporter: InMemorySpanExporter, tmp_path: Path) -> None:
    await _diagnose(tmp_path)
    (server,) = _by_name(exporter.get_finished_spans(), "diagnosis.v1.DiagnosisService/Diagnose")
    assert server.parent is None


async def test_a_failed_rpc_span_has_its_status_code(exporter: InMemorySpanExporter, tmp_path: Path) -> None:
    settings = load_settings(
        address="127.0.0.1:0",
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'trace.db'}",
        metrics_address="",
        http_address="",
    )
    running = await start_server(settings, provider=PassProvider(), tools_for=tools_for)
    try:
        async with grpc.aio.insecure_channel(running.target) as channel:
            stub = diagnosis_service_pb2_grpc.DiagnosisServiceStub(channel)
            with pytest.raises(grpc.aio.AioRpcError):
                await stub.GetRun(pb.GetRunRequest(run_id="run-missing"))
    finally:
        await running.stop(grace=1)
    (span,) = _by_name(exporter.get_finished_spans(), "diagnosis.v1.DiagnosisService/GetRun")
    assert span.attributes is not None and span.attributes["rpc.grpc.status_code"] == grpc.StatusCode.NOT_FOUND.value[0]


async def test_log_lines_of_a_call_and_its_run_carry_method_run_id_tenant_and_trace_id(
    exporter: InMemorySpanExporter, tmp_path: Path
) -> None:
    stream = io.StringIO()
    saved = structlog.get_config()
    configure_logging("info", stream=stream)
    try:
        final = await _diagnose(tmp_path, (("traceparent", TRACEPARENT),), provider=_FlakyPlanner())
    finally:
        structlog.configure(**saved)  # the suite's own (JSON on stderr), not the console default on stdout
    lines = [json.loads(line) for line in stream.getvalue().splitlines() if line.startswith("{")]
    mine = [line for line in lines if line.get("run_id") == final.run.run_id]
    assert {"rpc", "agent_failed"} <= {line["event"] for line in mine}  # the call's line and one of its run's
    for line in mine:
        assert line["tenant"] == "default"
        assert line["method"] == "diagnosis.v1.DiagnosisService/Diagnose"
        assert line["trace_id"] == TRACE_ID, line


def test_tracing_is_off_by_default_and_on_with_the_standard_variables() -> None:
    assert not tracing_wanted({})
    assert configure_tracing({}) is None
    assert tracing_wanted({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317"})
    assert tracing_wanted({"OTEL_TRACES_EXPORTER": "otlp"})
    assert not tracing_wanted({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x:4317"})
    assert not tracing_wanted({"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"})
