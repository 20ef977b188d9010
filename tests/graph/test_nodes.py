"""Node-contract tests: each node's input projection and writes (R-S-2), over the real store."""

from __future__ import annotations

import dataclasses
import json

import pytest

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.agents.base import AgentRequest
from diagnosis_server.graph.nodes.base import NodeResult
from diagnosis_server.graph.nodes.builder import BuilderInput
from diagnosis_server.graph.nodes.composer import ComposerInput
from diagnosis_server.graph.nodes.planner import PlannerInput
from diagnosis_server.graph.nodes.verifier import VerifierNodeInput
from diagnosis_server.graph.state import FIELD_OWNERS, owned_fields
from diagnosis_server.store import Repository

from . import fakes

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


@pytest.mark.requirement("R-S-2")
def test_projections_never_carry_prompts_reasoning_or_tool_output() -> None:
    forbidden = {"prompt", "prompt_text", "reasoning", "raw_text", "tool_output", "invocations", "state"}
    for projection in (PlannerInput, BuilderInput, VerifierNodeInput, ComposerInput):
        names = {f.name for f in dataclasses.fields(projection)}
        assert not names & forbidden, projection.__name__
    # The Verifier sees its canonical verified input alone (R-VI-2): no plan, no executor parse. The recorded
    # calls (ids, tools, arguments, times; never outputs) only build the allowed material after it answered.
    assert {f.name for f in dataclasses.fields(VerifierNodeInput)} == {
        "verifier_input",
        "verifier_input_bytes",
        "evidence_retry_count",
        "recorded_calls",
        "bound_values",
    }
    assert {f.name for f in dataclasses.fields(ComposerInput)} == {"material", "excluded_statements"}


@pytest.mark.requirement("R-S-1")
def test_every_field_has_one_owner_and_nodes_own_disjoint_fields() -> None:
    seen: set[str] = set()
    for node in run_pb2.NodeName.values():
        fields = owned_fields(node)
        assert not fields & seen
        seen |= fields
    assert seen | {k for k, v in FIELD_OWNERS.items() if isinstance(v, str)} == set(FIELD_OWNERS)


@pytest.mark.requirement("R-R-2")
async def test_executor_calling_a_blocked_tool_ends_in_the_pre_verification_fallback(
    repository: Repository,
) -> None:
    provider = fakes.pipeline(executor=fakes.executor_calling("shell.exec"))
    run = await fakes.diagnose(repository, provider)
    assert list(run.orchestration_trace.path) == [
        run_pb2.NODE_NAME_PLANNER,
        run_pb2.NODE_NAME_EXECUTOR,
        run_pb2.NODE_NAME_PRE_VERIFICATION_FALLBACK,
    ]
    events = await repository.list_events(run.run_id)
    assert events[1].outcome == run_pb2.NODE_OUTCOME_TOOL_BLOCKED
    assert run.orchestration_trace.end_reason == "TOOL_BLOCKED"
    assert run.status == run_pb2.RUN_STATUS_SUCCESS
    # The blocked call is recorded as this run's invocation (R-C-2), and no Verifier ran.
    invocations = await repository.list_tool_invocations(run.run_id)
    assert [(i.tool_name, i.status) for i in invocations] == [
        ("shell.exec", contracts_pb2.TOOL_INVOCATION_STATUS_BLOCKED)
    ]
    assert "verifier" not in provider.seen
    assert not run.self_evaluation.verifier_evaluation.HasField("effective_verdict")


@pytest.mark.requirement("R-C-2")
async def test_tool_calls_are_recorded_before_the_executor_sees_them(repository: Repository) -> None:
    recorded_when_seen: list[int] = []

    async def executor(request: AgentRequest) -> str:
        result_text = await fakes.executor_calling("k8s.events")(request)
        recorded_when_seen.append(len(await repository.list_tool_invocations(request.run_id)))
        return result_text

    provider = fakes.pipeline(executor=executor)
    run = await fakes.diagnose(repository, provider)
    assert recorded_when_seen == [1]
    assert run.verdict == contracts_pb2.VERDICT_PASS
    assert "OOMKilled" in run.answer_text


@pytest.mark.requirement("R-VI-4")
async def test_verifier_retry_gets_byte_identical_input_and_nothing_before_reruns(
    repository: Repository,
) -> None:
    calls = {"verifier": 0}

    async def flaky_verifier(request: AgentRequest) -> str:
        calls["verifier"] += 1
        return "not json" if calls["verifier"] == 1 else await fakes.verify_pass(request)

    provider = fakes.pipeline(verifier=flaky_verifier)
    run = await fakes.diagnose(repository, provider)
    first, second = provider.seen["verifier"]
    assert first.input_bytes == second.input_bytes
    assert (first.attempt, second.attempt) == (1, 2)
    assert len(provider.seen["executor"]) == 1 and len(provider.seen["planner"]) == 1
    assert len(await repository.list_tool_invocations(run.run_id)) == 1
    # R-VI-2: the Verifier's input holds exactly the R-C-4 blocks, nothing of the plan or the raw output.
    payload = json.loads(first.input_bytes)
    assert set(payload) <= fakes.VERIFIER_BLOCKS
    assert "retry_context" not in payload
    assert "restarts" not in first.input_bytes.decode()  # the plan's purpose never reaches it
    assert run.verdict == contracts_pb2.VERDICT_PASS


@pytest.mark.requirement("R-S-3")
async def test_one_event_and_step_record_per_agent_attempt(repository: Repository) -> None:
    provider = fakes.pipeline()
    run = await fakes.diagnose(repository, provider)
    steps = await repository.list_node_steps(run.run_id)
    assert [s.node for s in steps] == [
        run_pb2.NODE_NAME_PLANNER,
        run_pb2.NODE_NAME_EXECUTOR,
        run_pb2.NODE_NAME_VERIFIER,
        run_pb2.NODE_NAME_COMPOSER,
    ]
    events = await repository.list_events(run.run_id)
    assert [e.node for e in events] == list(run.orchestration_trace.path)
    assert [(s.node, s.attempt) for s in steps] == [
        (e.node, e.attempt) for e in events if e.node in {s.node for s in steps}
    ]


def test_node_result_defaults_write_nothing() -> None:
    assert dict(NodeResult(run_pb2.NODE_OUTCOME_OK).updates) == {}
