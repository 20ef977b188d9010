"""Diagnose over a loopback gRPC channel, the service wired as in production, agents on the fake endpoint."""

from __future__ import annotations

from pathlib import Path

import grpc.aio
import pytest

from diagnosis.v1 import contracts_pb2, diagnosis_service_pb2, diagnosis_service_pb2_grpc, run_pb2
from diagnosis_server.api import start_server
from diagnosis_server.settings import load_settings

from .openai_e2e import provider_for
from .openai_fake_endpoint import FakeOpenAI


@pytest.mark.requirement("R-T-1")
async def test_diagnose_streams_a_pass_run_from_the_openai_provider(fake: FakeOpenAI, tmp_path: Path) -> None:
    settings = load_settings(
        address="127.0.0.1:0",
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'grpc.db'}",
        metrics_address="",
        http_address="",
        shutdown_grace_s=2.0,
    )
    provider = provider_for(fake)
    running = await start_server(settings, provider=provider)  # the built-in tools over the bundled packs
    try:
        async with grpc.aio.insecure_channel(running.target) as channel:
            stub = diagnosis_service_pb2_grpc.DiagnosisServiceStub(channel)
            request = diagnosis_service_pb2.DiagnoseRequest(
                question="Why are checkouts failing on shop.example.com?",
                context=diagnosis_service_pb2.RequestContext(scenario="checkout-oom"),
            )
            messages = [m async for m in stub.Diagnose(request, timeout=20)]
            assert messages[0].WhichOneof("kind") == "started"
            events = [m.event for m in messages if m.WhichOneof("kind") == "event"]
            assert [e.node for e in events][:2] == [run_pb2.NODE_NAME_PLANNER, run_pb2.NODE_NAME_EXECUTOR]
            final = messages[-1]
            assert final.WhichOneof("kind") == "run"
            run = final.run
            assert run.status == run_pb2.RUN_STATUS_SUCCESS
            assert run.verdict == contracts_pb2.VERDICT_PASS
            assert run.agent_provider == "openai"
            assert "OOMKilled (exit code 137)" in run.answer_text

            stored = await stub.GetRun(diagnosis_service_pb2.GetRunRequest(run_id=run.run_id), timeout=5)
            assert stored.run.verdict == contracts_pb2.VERDICT_PASS
        invocations = await running.repository.list_tool_invocations(run.run_id)
        bound = {e.source_invocation_id for e in run.self_evaluation.verifier_evaluation.verified_evidence}
        assert bound and bound <= {i.invocation_id for i in invocations}
        assert [c.role for c in fake.calls] == ["planner", "executor", "executor", "verifier", "composer"]
    finally:
        await running.stop()
        await provider.aclose()
