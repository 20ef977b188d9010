"""Graph specification tests: it refuses a graph the engine cannot run, and every reader agrees with it
(R-R-1..R-R-7, R-S-1)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server import eval_report, limits
from diagnosis_server.api.validation import page_size
from diagnosis_server.graph import orchestrator as orchestrator_module
from diagnosis_server.graph import routing, state
from diagnosis_server.graph.context import Limits, RunContext
from diagnosis_server.graph.engine import GraphEngine, GraphProgrammingError
from diagnosis_server.graph.nodes import default_nodes
from diagnosis_server.graph.nodes.fallbacks import fallback_reason
from diagnosis_server.graph.orchestrator import Orchestrator
from diagnosis_server.graph.result import orchestration_trace
from diagnosis_server.graph.spec import END, GRAPH, GraphSpec, GraphSpecError, NodeSpec, Retry
from diagnosis_server.store import Repository
from diagnosis_server.tools.base import Toolset
from diagnosis_server.tools.runner import ToolRunner

from . import fakes

N = run_pb2.NodeName
O = run_pb2.NodeOutcome  # noqa: E741


def _with_node(name: int, **changes: Any) -> GraphSpec:
    """GRAPH with one node's specification changed (built, so validated, on the way)."""
    nodes = tuple(dataclasses.replace(n, **changes) if n.name == name else n for n in GRAPH.nodes)
    return dataclasses.replace(GRAPH, nodes=nodes)


def test_the_graph_specification_is_valid_and_names_every_node() -> None:
    assert GRAPH.names == {v for v in N.values() if v != N.NODE_NAME_UNSPECIFIED}
    assert dataclasses.replace(GRAPH) == GRAPH  # building it again validates it again


def test_a_route_to_an_unknown_node_is_refused() -> None:
    routes = {**GRAPH.node(N.NODE_NAME_COMPOSER).routes, O.NODE_OUTCOME_OK: 99}
    with pytest.raises(GraphSpecError, match=r"\(COMPOSER, OK\) routes to 99, which is not a node"):
        _with_node(N.NODE_NAME_COMPOSER, routes=routes)
    routes = {**GRAPH.node(N.NODE_NAME_PLANNER).routes, O.NODE_OUTCOME_INVALID_OUTPUT: Retry(98)}
    with pytest.raises(GraphSpecError, match="routes to 98"):
        _with_node(N.NODE_NAME_PLANNER, routes=routes)


def test_a_start_or_recursion_fallback_that_is_no_node_is_refused() -> None:
    with pytest.raises(GraphSpecError, match="is not a node"):
        dataclasses.replace(GRAPH, start=N.NODE_NAME_UNSPECIFIED)
    with pytest.raises(GraphSpecError, match="is not a node"):
        dataclasses.replace(GRAPH, nodes=GRAPH.nodes[:-2] + GRAPH.nodes[-1:])


def test_a_field_owned_twice_is_refused() -> None:
    with pytest.raises(GraphSpecError, match="field 'plan' is owned by PLANNER and VERIFIER"):
        _with_node(N.NODE_NAME_VERIFIER, owns=GRAPH.node(N.NODE_NAME_VERIFIER).owns | {"plan"})
    with pytest.raises(GraphSpecError, match="field 'steps' is owned by input and engine"):
        dataclasses.replace(GRAPH, input_fields=GRAPH.input_fields | {"steps"})


def test_a_state_field_with_no_owner_or_an_owned_name_that_is_no_field_is_refused() -> None:
    @dataclasses.dataclass
    class Wider(state.DiagnosisState):
        extra: int = 0

    with pytest.raises(GraphSpecError, match="field 'extra' has no owner"):
        GRAPH.check_state(Wider)
    spec = _with_node(N.NODE_NAME_COMPOSER, owns=GRAPH.node(N.NODE_NAME_COMPOSER).owns | {"ghost"})
    with pytest.raises(GraphSpecError, match="'ghost' is owned but is no field of DiagnosisState"):
        spec.check_state(state.DiagnosisState)
    GRAPH.check_state(state.DiagnosisState)


def test_an_unrouted_outcome_is_refused() -> None:
    with pytest.raises(GraphSpecError, match="GATEKEEPER's crash outcome FAILED has no route"):
        _with_node(N.NODE_NAME_GATEKEEPER, crash_outcome=O.NODE_OUTCOME_FAILED)
    with pytest.raises(GraphSpecError, match="PRE_VERIFICATION_FALLBACK routes no outcome"):
        _with_node(N.NODE_NAME_PRE_VERIFICATION_FALLBACK, routes={})
    with pytest.raises(GraphSpecError, match="an outcome that does not exist"):
        _with_node(N.NODE_NAME_PRE_VERIFICATION_FALLBACK, routes={O.NODE_OUTCOME_OK: END, 999: END})


def test_an_unreachable_node_and_a_node_with_no_way_to_end_are_refused() -> None:
    composer = GRAPH.node(N.NODE_NAME_COMPOSER)
    routes = {o: N.NODE_NAME_PRE_VERIFICATION_FALLBACK if t != END else END for o, t in composer.routes.items()}
    with pytest.raises(GraphSpecError, match="POST_VERIFICATION_FALLBACK is not reachable from PLANNER"):
        _with_node(N.NODE_NAME_COMPOSER, routes=routes)
    looping = {O.NODE_OUTCOME_OK: N.NODE_NAME_POST_VERIFICATION_FALLBACK}
    with pytest.raises(GraphSpecError, match="no path from POST_VERIFICATION_FALLBACK reaches END"):
        _with_node(N.NODE_NAME_POST_VERIFICATION_FALLBACK, routes=looping)


def test_the_routing_table_and_field_owners_are_the_specifications() -> None:
    assert {(n.name, o): t for n in GRAPH.nodes for o, t in n.routes.items()} == routing.ROUTES
    assert routing.START == GRAPH.start == N.NODE_NAME_PLANNER
    for node in GRAPH.nodes:
        assert routing.outcomes_of(node.name) == frozenset(node.routes)
        assert state.owned_fields(node.name) == node.owns
        assert node.crash_outcome is None or node.crash_outcome in node.routes
    owners = state.FIELD_OWNERS
    assert {name for name, owner in owners.items() if owner == "engine"} == GRAPH.engine_fields
    assert {name for name, owner in owners.items() if owner == "input"} == GRAPH.input_fields
    assert {f.name for f in dataclasses.fields(state.DiagnosisState)} == set(owners)


def test_the_node_set_labels_and_reason_codes_are_the_specifications() -> None:
    assert set(default_nodes()) == GRAPH.names
    assert {n.label: n.abbreviation for n in GRAPH.nodes} == eval_report._ABBREVIATIONS
    assert eval_report._ABBREVIATIONS["verified_input_builder"] == "B"
    for node in GRAPH.nodes:
        event = run_pb2.OrchestrationEvent(outcome=O.NODE_OUTCOME_NON_RETRYABLE_FAILED, reason_code="X")
        event.node = node.name  # type: ignore[assignment]
        assert fallback_reason(event) == (node.exhausted_reason or "X")
        final = state.DiagnosisState(run_id="r", question="q", scenario="", orchestration_events=(event,))
        assert orchestration_trace(final).end_reason == (node.end_reason or "UNKNOWN")


def test_every_limit_has_one_definition() -> None:
    assert GRAPH.limits == Limits() == limits.DEFAULT_LIMITS
    assert GRAPH.limits.recursion_limit == routing.DEFAULT_RECURSION_LIMIT

    async def recorder(_: contracts_pb2.ToolInvocation) -> None:
        return None

    runner = ToolRunner(run_id="r", toolset=Toolset([]), recorder=recorder)
    assert (runner._timeout_s, runner._max_output_bytes, runner._max_calls) == (
        GRAPH.limits.tool_timeout_s,
        GRAPH.limits.max_tool_output_bytes,
        GRAPH.limits.max_tool_calls,
    )
    assert page_size(0) == limits.DEFAULT_PAGE_SIZE and page_size(10**6) == limits.MAX_PAGE_SIZE
    assert RunContext.__dataclass_fields__["limits"].default is limits.DEFAULT_LIMITS


def test_an_engine_with_a_node_the_specification_does_not_name_refuses_to_build() -> None:
    nodes: dict[int, Any] = dict(default_nodes())
    nodes[99] = nodes[N.NODE_NAME_COMPOSER]
    with pytest.raises(GraphProgrammingError, match=r"does not name: \[99\]"):
        GraphEngine(nodes)


async def test_the_engine_is_built_once_with_the_orchestrator(
    repository: Repository, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = fakes.pipeline()
    orchestrator = Orchestrator(store=repository, provider=provider, tools_for=lambda _: fakes.tools())

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("an engine was built for a run")

    monkeypatch.setattr(orchestrator_module, "GraphEngine", refuse)
    for _ in range(2):
        run = await orchestrator.run(question="why?", scenario="")
        assert run.status == run_pb2.RUN_STATUS_SUCCESS
        assert run.orchestration_trace.terminal_node in (N.NODE_NAME_COMPOSER, N.NODE_NAME_POST_VERIFICATION_FALLBACK)


def test_node_specs_are_frozen() -> None:
    node = GRAPH.node(N.NODE_NAME_PLANNER)
    assert isinstance(node, NodeSpec)
    with pytest.raises(dataclasses.FrozenInstanceError):
        node.abbreviation = "X"  # type: ignore[misc]
