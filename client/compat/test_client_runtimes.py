"""The installed client on the runtimes under test: every RPC against a real server, errors typed, enums named."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from google.protobuf import json_format

import diagnosis
from diagnosis import (
    AsyncDiagnosisClient,
    ConnectionConfig,
    DiagnosisClient,
    InvalidArgumentError,
    NotFoundError,
    message_to_dict,
    message_to_json,
    run_status_name,
    verdict_name,
)
from diagnosis.v1 import contracts_pb2, run_pb2

GENERATED = ("contracts", "diagnosis_service", "gatekeeper_service", "run")


def test_the_installed_package_runs_on_these_runtimes_without_a_warning() -> None:
    """The package comes from this environment's site-packages, not the checkout; its generated code imports
    with every warning an error (a gencode or grpcio version check fails or warns at import)."""
    assert "site-packages" in Path(diagnosis.__file__).parts, diagnosis.__file__
    modules = ", ".join(f"diagnosis.v1.{name}_pb2, diagnosis.v1.{name}_pb2_grpc" for name in GENERATED)
    result = subprocess.run(
        [sys.executable, "-W", "error", "-c", f"import diagnosis, {modules}"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    print(f"protobuf {metadata.version('protobuf')}, grpcio {metadata.version('grpcio')}, {sys.version.split()[0]}")


def test_status_and_verdict_read_by_name() -> None:
    assert run_status_name(run_pb2.RUN_STATUS_SUCCESS) == "SUCCESS"
    assert run_status_name(run_pb2.RUN_STATUS_UNSPECIFIED) == "UNSPECIFIED"
    assert verdict_name(contracts_pb2.VERDICT_LOW_CONFID) == "LOW_CONFID"
    assert verdict_name(99) == "99"  # a newer server's value: its number, never an exception
    assert diagnosis.enum_name(contracts_pb2.ToolInvocationStatus, 1) == "TOOL_INVOCATION_STATUS_OK"


def test_ask_runs_a_diagnosis_to_its_stored_end(client: DiagnosisClient, finished_run: tuple[str, int]) -> None:
    assert finished_run[1] >= 6  # one event per node attempt, Planner to Composer
    run = client.get_run(finished_run[0])
    assert run_status_name(run.status) == "SUCCESS"
    assert verdict_name(run.verdict) in {"PASS", "LOW_CONFID", "REJECT"}
    assert run.answer_text and run.scenario == "checkout-oom"


def test_list_watch_and_invocations_read_the_run_back(client: DiagnosisClient, finished_run: tuple[str, int]) -> None:
    page = client.list_runs(status="success", page_size=100)
    assert finished_run[0] in [run.run_id for run in page.runs]
    assert all(run.status == run_pb2.RUN_STATUS_SUCCESS for run in page.runs)
    assert finished_run[0] in [run.run_id for run in client.iter_runs(page_size=1)]
    messages = list(client.watch_run(finished_run[0]))
    kinds = [m.WhichOneof("kind") for m in messages]
    # One event a node attempt, each tool call's start and end (the Executor's calls), then how the run ended.
    assert kinds.count("event") == finished_run[1] and kinds[-1] == "ended" and kinds.count("ended") == 1
    assert "tool_call" in kinds and set(kinds) == {"event", "tool_call", "ended"}
    assert run_status_name(messages[-1].ended.status) == "SUCCESS"
    invocations = list(client.iter_tool_invocations(finished_run[0], page_size=2))
    assert invocations and [i.invocation_id for i in invocations] == sorted(i.invocation_id for i in invocations)
    scenarios = {s.name: s for s in client.list_scenarios()}
    assert scenarios["checkout-oom"].is_default
    assert client.list_environments() == []


def test_the_gatekeeper_accepts_the_runs_own_evidence_as_json(
    client: DiagnosisClient, finished_run: tuple[str, int]
) -> None:
    """message_to_dict shows fields at their default value (``critical: false``): the run's verified evidence
    as JSON is a legal executor output again."""
    run = client.get_run(finished_run[0])
    evidence = message_to_dict(run.self_evaluation.verifier_evaluation.verified_executor_output)
    assert {claim["critical"] for claim in evidence["claims"]} == {True, False}
    invocations = [message_to_dict(i) for i in client.iter_tool_invocations(finished_run[0])]
    checked = client.check_evidence(run_id=run.run_id, tool_invocations=invocations, executor_output=evidence)
    assert checked.parse_status == contracts_pb2.PARSE_STATUS_OK
    assert checked.gatekeeper_result.status == contracts_pb2.GATEKEEPER_STATUS_PASS
    again = json_format.Parse(message_to_json(run), run_pb2.DiagnosisRun())
    assert again == run
    assert json.loads(message_to_json(run, indent=None))["failure_reason"] == ""


def test_errors_are_typed(client: DiagnosisClient) -> None:
    with pytest.raises(NotFoundError):
        client.get_run("run-does-not-exist")
    with pytest.raises(InvalidArgumentError) as bad:
        client.ask("   ", scenario="checkout-oom")
    assert "question" in bad.value.message


def test_the_async_client_reads_the_same_run(target: str, finished_run: tuple[str, int]) -> None:
    async def read() -> tuple[run_pb2.DiagnosisRun, list[str | None]]:
        async with AsyncDiagnosisClient(ConnectionConfig(target=target, default_timeout=30.0)) as client:
            run = await client.get_run(finished_run[0])
            watched: list[str | None] = [m.WhichOneof("kind") async for m in client.watch_run(finished_run[0])]
            return run, watched

    run, watched = asyncio.run(read())
    assert run.run_id == finished_run[0] and run_status_name(run.status) == "SUCCESS"
    assert watched.count("event") == finished_run[1] and watched[-1] == "ended"
