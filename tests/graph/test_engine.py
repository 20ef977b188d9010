"""Engine tests: fail-closed writes and outcomes, bounded events, the recursion limit (R-R-7, R-S-1, R-S-3)."""

from __future__ import annotations

from typing import Any

import pytest

from diagnosis.v1 import run_pb2
from diagnosis_server.agents.prompts import default_catalog
from diagnosis_server.graph.context import Limits, RunContext
from diagnosis_server.graph.engine import GraphEngine, GraphProgrammingError
from diagnosis_server.graph.nodes import default_nodes
from diagnosis_server.graph.nodes.base import NodeResult
from diagnosis_server.graph.orchestrator import Orchestrator
from diagnosis_server.graph.routing import RoutingError, route
from diagnosis_server.graph.state import DiagnosisState
from diagnosis_server.store import Repository

from . import fakes

N = run_pb2.NodeName
O = run_pb2.NodeOutcome  # noqa: E741


class _Rogue:
    """A planner that misbehaves in the way it is told."""

    name = N.NODE_NAME_PLANNER

    def __init__(self, result: NodeResult) -> None:
        self._result = result

    def project(self, state: DiagnosisState) -> None:
        return None

    async def run(self, inputs: Any, ctx: RunContext, *, attempt: int, cycle: int) -> NodeResult:
        return self._result


class _Looping:
    """A verifier that always asks for another evidence cycle (no business limit): only the recursion limit stops it."""

    name = N.NODE_NAME_VERIFIER

    def project(self, state: DiagnosisState) -> None:
        return None

    async def run(self, inputs: Any, ctx: RunContext, *, attempt: int, cycle: int) -> NodeResult:
        return NodeResult(O.NODE_OUTCOME_VERDICT_LOW_CONFID_EVIDENCE_GAP, "EVIDENCE_GAP_RETRY")


def _ctx(repository: Repository) -> RunContext:
    provider = fakes.pipeline()
    return RunContext(
        run_id="run-engine", provider=provider, catalog=default_catalog(), tools=fakes.tools(), invocations=repository
    )


@pytest.mark.requirement("R-S-1")
async def test_a_write_to_a_field_the_node_does_not_own_raises_at_once(repository: Repository) -> None:
    nodes = default_nodes()
    nodes[N.NODE_NAME_PLANNER] = _Rogue(NodeResult(O.NODE_OUTCOME_OK, updates={"effective_verdict": 1}))
    with pytest.raises(GraphProgrammingError, match="does not own"):
        await GraphEngine(nodes).run(DiagnosisState(run_id="run-engine", question="q", scenario=""), _ctx(repository))


@pytest.mark.requirement("R-R-7")
async def test_an_outcome_with_no_route_raises_at_once(repository: Repository) -> None:
    nodes = default_nodes()
    nodes[N.NODE_NAME_PLANNER] = _Rogue(NodeResult(O.NODE_OUTCOME_VERDICT_PASS))
    with pytest.raises(GraphProgrammingError, match="no route"):
        await GraphEngine(nodes).run(DiagnosisState(run_id="run-engine", question="q", scenario=""), _ctx(repository))


def test_an_engine_missing_a_routed_node_refuses_to_build() -> None:
    nodes = default_nodes()
    del nodes[N.NODE_NAME_COMPOSER]
    with pytest.raises(GraphProgrammingError):
        GraphEngine(nodes)
    with pytest.raises(RoutingError):
        route(N.NODE_NAME_COMPOSER, O.NODE_OUTCOME_TOOL_BLOCKED)


@pytest.mark.requirement("R-R-7")
@pytest.mark.timeout(10)  # without the limit this run never ends: fail in seconds, not at the suite's bound
async def test_the_recursion_limit_ends_the_run_through_the_pre_verification_fallback(
    repository: Repository,
) -> None:
    nodes = default_nodes()
    nodes[N.NODE_NAME_VERIFIER] = _Looping()
    provider = fakes.pipeline()
    orchestrator = Orchestrator(
        store=repository,
        provider=provider,
        tools_for=lambda _: fakes.tools(),
        limits=Limits(recursion_limit=12),
        nodes=nodes,
    )
    run = await orchestrator.run(question="why?", scenario="")
    trace = run.orchestration_trace
    assert trace.terminal_node == N.NODE_NAME_PRE_VERIFICATION_FALLBACK
    assert trace.end_reason == "RECURSION_LIMIT"
    assert trace.steps == 13  # the limit, then the fallback
    assert run.status == run_pb2.RUN_STATUS_SUCCESS
    assert "OOMKilled" not in run.answer_text
    assert run.self_evaluation.verifier_evaluation.failure_reason == "RECURSION_LIMIT"


@pytest.mark.requirement("R-S-1")
async def test_orchestration_events_are_a_bounded_append(repository: Repository) -> None:
    provider = fakes.pipeline()
    seen: list[run_pb2.OrchestrationEvent] = []

    async def on_event(event: run_pb2.OrchestrationEvent) -> None:
        seen.append(event)

    orchestrator = Orchestrator(
        store=repository, provider=provider, tools_for=lambda _: fakes.tools(), limits=Limits(max_events=3)
    )
    run = await orchestrator.run(question="why?", scenario="", on_event=on_event)
    trace = run.orchestration_trace
    assert len(seen) == 3
    assert trace.event_count == 6 and trace.dropped_events == 3
    assert len(await repository.list_events(run.run_id)) == 3


async def test_an_unexpected_node_exception_fails_closed(repository: Repository) -> None:
    async def broken(_: Any) -> str:
        raise RuntimeError("bug")

    provider = fakes.pipeline(verifier=broken)
    run = await fakes.diagnose(repository, provider)
    assert run.orchestration_trace.terminal_node == N.NODE_NAME_PRE_VERIFICATION_FALLBACK
    assert run.orchestration_trace.end_reason == "VERIFIER_FAILED"
    assert not run.self_evaluation.verifier_evaluation.HasField("model_verdict")
