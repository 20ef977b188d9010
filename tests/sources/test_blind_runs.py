"""A run that could see nothing says so: every source of the environment fails (the Kubernetes API refuses the
reader, Loki and Prometheus cannot be reached), and the embedded default's answer leads with each failing source,
its endpoint and its own error; the run records them in ``source_failures`` and is ``blind``; ``diagnosis ask``
prints ``environment: NAME`` first and exits 3; the answer never says there is no data about the workload."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import grpc.aio
import pytest

from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis.v1 import diagnosis_service_pb2_grpc, run_pb2
from diagnosis_server.api import RunningServer, start_server
from diagnosis_server.api.components import load_provider
from diagnosis_server.settings import load_settings

from .conftest import MCP_SERVER, free_port, write_kubeconfig
from .fake_http import FakeUpstream, Request, Response, json_response

CLI = "import sys; from diagnosis_server.cli import main; sys.exit(main())"


def _forbidden(request: Request) -> Response:
    """The API server's answer to a reader without RBAC rights (meta/v1 Status, reason Forbidden)."""
    return json_response(
        403,
        {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": f'pods is forbidden: User "system:serviceaccount:shop:reader" cannot list resource "pods" '
            f'in API group "" at {request.path}',
            "reason": "Forbidden",
            "details": {"kind": "pods"},
            "code": 403,
        },
    )


@dataclass
class Served:
    running: RunningServer
    stub: diagnosis_service_pb2_grpc.DiagnosisServiceAsyncStub
    cluster: str
    prometheus: str
    loki: str


@pytest.fixture
async def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Served]:
    for name in list(os.environ):
        if name.startswith("DIAGNOSIS_"):
            monkeypatch.delenv(name)
    cluster = FakeUpstream(_forbidden)
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", cluster.url)
    prometheus, loki = f"http://127.0.0.1:{free_port()}", f"http://127.0.0.1:{free_port()}"
    (tmp_path / "environments.toml").write_text(
        f"""
[environments.prod]
default = true
prometheus = {{ url = "{prometheus}", timeout_s = 2 }}
loki = {{ url = "{loki}", timeout_s = 2 }}
kubernetes = {{ kubeconfig = "{kubeconfig}", context = "test", namespaces = ["shop"] }}
"""
    )
    settings = load_settings(
        address="127.0.0.1:0",
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'blind.db'}",
        metrics_address="",
        http_address="",
        environments_file=str(tmp_path / "environments.toml"),
    )
    running = await start_server(settings, provider=load_provider("heuristic"))
    channel = grpc.aio.insecure_channel(running.target)
    try:
        yield Served(running, diagnosis_service_pb2_grpc.DiagnosisServiceStub(channel), cluster.url, prometheus, loki)
    finally:
        await channel.close()
        await running.stop(grace=2.0)
        cluster.close()


async def _diagnose(stub: diagnosis_service_pb2_grpc.DiagnosisServiceAsyncStub, question: str) -> run_pb2.DiagnosisRun:
    request = pb.DiagnoseRequest(question=question, context=pb.RequestContext(environment="prod"))
    messages = [m async for m in stub.Diagnose(request)]
    return messages[-1].run


async def test_a_run_whose_sources_all_fail_names_each_and_is_blind(served: Served) -> None:
    run = await _diagnose(served.stub, "Why is checkout-api failing?")
    assert run.status == run_pb2.RUN_STATUS_SUCCESS and run.blind
    failures = {f.source: f for f in run.source_failures}
    assert set(failures) == {"prometheus", "loki", "kubernetes"}
    assert failures["kubernetes"].endpoint == served.cluster and "403" in failures["kubernetes"].message
    assert "forbidden" in failures["kubernetes"].message.lower()
    assert failures["prometheus"].endpoint == served.prometheus
    assert failures["prometheus"].message.startswith("prometheus.")
    assert failures["loki"].endpoint == served.loki and failures["loki"].failed_calls >= 1
    first = run.answer_text.splitlines()[0]
    assert first.startswith("Sources that failed: ")
    for source in ("prometheus", "loki", "kubernetes"):
        assert f"{source} at {failures[source].endpoint} failed" in first
    text = run.answer_text.lower()
    assert "no data about" not in text and "no incident" not in text


async def test_ask_says_which_environment_answered_and_exits_3_on_a_blind_run(served: Served) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIAGNOSIS_")}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", CLI, "ask", "Why is checkout-api failing?", "--environment", "prod",
        "--target", served.running.target,
        env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    async with asyncio.timeout(120):
        out, _ = await process.communicate()
    lines = out.decode().splitlines()
    assert process.returncode == 3, out.decode()
    assert lines[0] == "environment: prod"
    assert lines[1].startswith("Sources that failed: ")


async def test_an_environment_of_unmapped_mcp_tools_says_the_heuristic_has_no_tool_to_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An MCP-only environment (a real MCP server over stdio) whose tools no rule maps: the answer says plainly
    that there was no tool to call, the run is blind, and it does not blame a reply."""
    for name in list(os.environ):
        if name.startswith("DIAGNOSIS_"):
            monkeypatch.delenv(name)
    (tmp_path / "environments.toml").write_text(
        f"""
[environments.tools]
default = true
[[environments.tools.mcp]]
name = "tools"
command = ["{sys.executable}", "{MCP_SERVER}", "stdio"]
tools = ["alert_rules"]
"""
    )
    settings = load_settings(
        address="127.0.0.1:0",
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'mcp.db'}",
        metrics_address="",
        http_address="",
        environments_file=str(tmp_path / "environments.toml"),
    )
    running = await start_server(settings, provider=load_provider("heuristic"))
    channel = grpc.aio.insecure_channel(running.target)
    try:
        stub = diagnosis_service_pb2_grpc.DiagnosisServiceStub(channel)
        request = pb.DiagnoseRequest(question="Why is checkout-api failing?", context=pb.RequestContext())
        run = [m async for m in stub.Diagnose(request)][-1].run
    finally:
        await channel.close()
        await running.stop(grace=2.0)
    assert run.status == run_pb2.RUN_STATUS_SUCCESS and run.environment == "tools" and run.blind
    assert "No tool of this run is one the Planner can call" in run.answer_text
    assert run.answer_text.splitlines()[0] == "No source was called: this answer rests on no observation."


async def test_a_mapped_mcp_tool_is_called_and_read_by_the_analyzers_of_what_it_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rules file maps an MCP tool to a workload's logs with its arguments: the embedded default calls it
    (a real MCP server over stdio), reads its Loki-shaped answer with the log analyzers, and binds the MCP tool."""
    for name in list(os.environ):
        if name.startswith("DIAGNOSIS_"):
            monkeypatch.delenv(name)
    rules = tmp_path / "rules.toml"
    rules.write_text(
        """
[[mcp]]
tool = "mcp.tools.query_logs"
answers = "logs"
arguments = { logql = '{{app="{workload}"}}' }
"""
    )
    monkeypatch.setenv("DIAGNOSIS_HEURISTIC_RULES_FILE", str(rules))
    (tmp_path / "environments.toml").write_text(
        f"""
[environments.tools]
default = true
[[environments.tools.mcp]]
name = "tools"
command = ["{sys.executable}", "{MCP_SERVER}", "stdio"]
tools = ["query_logs"]
"""
    )
    settings = load_settings(
        address="127.0.0.1:0",
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'mapped.db'}",
        metrics_address="",
        http_address="",
        environments_file=str(tmp_path / "environments.toml"),
    )
    running = await start_server(settings, provider=load_provider("heuristic"))
    channel = grpc.aio.insecure_channel(running.target)
    try:
        stub = diagnosis_service_pb2_grpc.DiagnosisServiceStub(channel)
        request = pb.DiagnoseRequest(question="Why is cart-api failing?", context=pb.RequestContext())
        run = [m async for m in stub.Diagnose(request)][-1].run
        listed = await stub.ListToolInvocations(pb.ListToolInvocationsRequest(run_id=run.run_id))
    finally:
        await channel.close()
        await running.stop(grace=2.0)
    called = [(i.tool_name, i.arguments.fields["logql"].string_value) for i in listed.invocations]
    assert called == [("mcp.tools.query_logs", '{app="cart-api"}')]
    assert run.status == run_pb2.RUN_STATUS_SUCCESS and not run.blind, run.answer_text
    checked = run.self_evaluation.verifier_evaluation.gatekeeper_result.checked_bindings
    assert checked and all(c.tool_name == "mcp.tools.query_logs" and c.passed for c in checked)
    assert "cart-api runs out of memory" in run.answer_text
