"""Every node's explicit input projection, all eight (R-S-2, R-S-1, R-VI-2).

A node reads its projection and nothing else of the state: each projection has exactly the fields listed
here, each taken from the state field named here (or derived as said), never the state itself, a copy of
it, prompt text, reasoning or tool output. The agents' own inputs are checked too: the Planner's and the
Executor's payloads hold exactly their keys, and the Verifier's and Composer's bytes are their canonical
inputs (tests/graph/test_retries.py, tests/graph/test_composer_input.py).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.agents.base import AgentRequest
from diagnosis_server.composition.material import AllowedMaterial
from diagnosis_server.composition.notes import RunRecord
from diagnosis_server.composition.suggestions import RecordedCall
from diagnosis_server.graph.nodes import default_nodes
from diagnosis_server.graph.nodes.builder import BuilderInput
from diagnosis_server.graph.nodes.composer import ComposerInput
from diagnosis_server.graph.nodes.executor import ExecutorInput
from diagnosis_server.graph.nodes.fallbacks import PostFallbackInput, PreFallbackInput
from diagnosis_server.graph.nodes.gatekeeper import GatekeeperInput
from diagnosis_server.graph.nodes.planner import PlannerInput
from diagnosis_server.graph.nodes.verifier import VerifierNodeInput
from diagnosis_server.graph.orchestrator import Orchestrator
from diagnosis_server.graph.state import DiagnosisState
from diagnosis_server.graph.verified_cycle import VerifiedCycle
from diagnosis_server.protocols.executor import ExecutorParse
from diagnosis_server.protocols.planner import PlannerMode, PlanStep
from diagnosis_server.store import Repository

from . import fakes

N = run_pb2.NodeName

# node -> (projection type, {projection field: state field it is, or None when derived})
PROJECTIONS: dict[int, tuple[type, dict[str, str | None]]] = {
    N.NODE_NAME_PLANNER: (
        PlannerInput,
        {"question": "question", "scenario": "scenario", "cycle": None, "mode": None, "retry_context": "retry_context"},
    ),
    N.NODE_NAME_EXECUTOR: (
        ExecutorInput,
        {
            "question": "question",
            "scenario": "scenario",
            "cycle": "cycle",
            "mode": "planner_mode",
            "plan": "plan",
            "retry_context": "retry_context",
            # Derived: the claims the earlier cycle verified (its verifier input), carried into an evidence retry.
            "earlier_claims": None,
        },
    ),
    N.NODE_NAME_GATEKEEPER: (GatekeeperInput, {"run_id": "run_id", "executor_parse": "executor_parse"}),
    N.NODE_NAME_VERIFIED_INPUT_BUILDER: (
        BuilderInput,
        {
            "question": "question",
            "scenario": "scenario",
            "cycle": "cycle",
            "output": None,
            "gatekeeper_result": "gatekeeper_result",
            "retry_context": "retry_context",
        },
    ),
    N.NODE_NAME_VERIFIER: (
        VerifierNodeInput,
        {
            "verifier_input": "verifier_input",
            "verifier_input_bytes": "verifier_input_bytes",
            "evidence_retry_count": "evidence_retry_count",
            "recorded_calls": "recorded_calls",
            "bound_values": "bound_values",
        },
    ),
    # Derived: the standing answer's material (graph/standing.py), and what the guard excludes.
    N.NODE_NAME_COMPOSER: (ComposerInput, {"material": None, "excluded_statements": None}),
    N.NODE_NAME_PRE_VERIFICATION_FALLBACK: (
        PreFallbackInput,
        {"record": None, "known": "allowed_material", "earlier_verified": None},
    ),
    N.NODE_NAME_POST_VERIFICATION_FALLBACK: (PostFallbackInput, {"material": None, "record": None}),
}


def _state() -> DiagnosisState:
    """A state with every field set to a value of its own, so a projection's source can be told apart."""
    output = contracts_pb2.ExecutorEvidenceV2(contract="executor_evidence_v2")
    output.claims.add(claim_id="c1", statement="pods are OOMKilled", status=contracts_pb2.CLAIM_STATUS_CONFIRMED)
    output.claims.add(claim_id="c2", statement="the disk is full", status=contracts_pb2.CLAIM_STATUS_CONFIRMED)
    gatekeeper = contracts_pb2.GatekeeperResult(
        status=contracts_pb2.GATEKEEPER_STATUS_FAIL, severity=contracts_pb2.GATEKEEPER_SEVERITY_LOW_CONFID
    )
    gatekeeper.checked_bindings.add(claim_id="c1", passed=True)
    gatekeeper.checked_bindings.add(claim_id="c2", passed=False, failed_rules=["evidence.matched_text"])
    verifier_input = contracts_pb2.VerifierInput(verdict_ceiling=contracts_pb2.VERDICT_LOW_CONFID)
    verifier_input.verified_executor_output.claims.add(claim_id="c1", statement="pods are OOMKilled")
    material = AllowedMaterial(verdict=contracts_pb2.VERDICT_LOW_CONFID, question="why?", confirmable=())
    # Cycle 1's verification, kept when the evidence retry (cycle 2, under way) started.
    earlier = VerifiedCycle(
        cycle=1,
        verifier_input=verifier_input,
        verifier_output=contracts_pb2.VerifierOutput(rationale="private"),
        model_verdict=contracts_pb2.VERDICT_PASS,
        effective_verdict=contracts_pb2.VERDICT_LOW_CONFID,
        allowed_material=material,
    )
    event = run_pb2.OrchestrationEvent(
        node=N.NODE_NAME_VERIFIER, outcome=run_pb2.NODE_OUTCOME_RETRYABLE_FAILED, reason_code="VERIFIER_TIMEOUT"
    )
    return DiagnosisState(
        run_id="run-projections",
        question="why is checkout failing?",
        scenario="checkout-oom",
        cycle=2,
        planner_mode=PlannerMode.EVIDENCE_GAP_ONLY,
        plan=(PlanStep("k8s.events", {"service": "checkout-api"}, "restarts"),),
        executor_parse=ExecutorParse(status=contracts_pb2.PARSE_STATUS_OK, output=output),
        executor_parse_status=contracts_pb2.PARSE_STATUS_OK,
        gatekeeper_result=gatekeeper,
        verdict_ceiling=contracts_pb2.VERDICT_LOW_CONFID,
        recorded_calls=(RecordedCall("inv-1", "k8s.events", {}, None, contracts_pb2.TOOL_INVOCATION_STATUS_OK),),
        bound_values={("inv-1", "/events/0/reason"): "OOMKilled"},
        verifier_input=verifier_input,
        verifier_input_bytes=b'{"verified":1}',
        verifier_status=run_pb2.NODE_OUTCOME_OK,
        verifier_output=contracts_pb2.VerifierOutput(rationale="private"),
        model_verdict=contracts_pb2.VERDICT_PASS,
        effective_verdict=contracts_pb2.VERDICT_LOW_CONFID,
        allowed_material=material,
        evidence_retry_count=1,
        retry_context=contracts_pb2.RetryContext(evidence_retry_count=1),
        verified_before_retry=earlier,
        composer_refusal=("composer.citation",),
        fallback_reason="",
        steps=9,
        routed_by=event,
        technical_retries=((N.NODE_NAME_VERIFIER, 1),),
    )


def test_every_node_has_a_projection_here() -> None:
    assert set(PROJECTIONS) == set(default_nodes())


@pytest.mark.parametrize("node", list(PROJECTIONS), ids=lambda n: N.Name(n))
def test_each_projection_has_exactly_its_fields_each_from_its_state_field(node: int) -> None:
    """R-S-2: the projection type and its field set are exact; each field is the state's value itself."""
    kind, sources = PROJECTIONS[node]
    assert {f.name for f in dataclasses.fields(kind)} == set(sources)
    state = _state()
    projection = default_nodes()[node].project(state)
    assert type(projection) is kind
    for name, source in sources.items():
        value = getattr(projection, name)
        assert not isinstance(value, DiagnosisState | dict) or (isinstance(value, dict) and name == "bound_values")
        if source is not None:
            assert value is getattr(state, source), f"{kind.__name__}.{name} is not state.{source}"
    if isinstance(projection, ExecutorInput):
        assert state.verified_before_retry is not None
        claims = state.verified_before_retry.verifier_input.verified_executor_output.claims
        assert list(projection.earlier_claims) == list(claims)


def test_derived_projection_fields() -> None:
    state = _state()
    nodes = default_nodes()
    planner = nodes[N.NODE_NAME_PLANNER].project(state)
    assert (planner.cycle, planner.mode) == (2, "EVIDENCE_GAP_ONLY")  # evidence_retry_count + 1, from retry_context
    state.retry_context = None
    state.evidence_retry_count = 0
    planner = nodes[N.NODE_NAME_PLANNER].project(state)
    assert (planner.cycle, planner.mode, planner.retry_context) == (1, "FULL", None)
    state = _state()
    builder = nodes[N.NODE_NAME_VERIFIED_INPUT_BUILDER].project(state)
    assert state.executor_parse is not None and builder.output is state.executor_parse.output
    composer = nodes[N.NODE_NAME_COMPOSER].project(state)
    # The retry's verified input does not belong to its Gatekeeper result: the answer is cycle 1's, kept.
    assert state.verified_before_retry is not None
    assert composer.material is state.verified_before_retry.allowed_material
    # The statements the material does not allow, for the guard only: the verified claim the material does not
    # show, and the claim that never reached the Verifier (its binding failed).
    assert composer.excluded_statements == ("pods are OOMKilled", "the disk is full")
    pre = nodes[N.NODE_NAME_PRE_VERIFICATION_FALLBACK].project(state)
    assert pre.record == RunRecord(
        reason_code="VERIFIER_FAILED",
        last_reason="VERIFIER_TIMEOUT",
        executor_parse_status=contracts_pb2.PARSE_STATUS_OK,
        claims=2,
        gatekeeper=state.gatekeeper_result,
        calls=state.recorded_calls,
        calls_known=True,
        composer_refusal=("composer.citation",),
    )
    # The retry did not complete its own verification: cycle 1's kept answer is the run's.
    assert pre.earlier_verified is True
    state.verified_before_retry = None
    assert nodes[N.NODE_NAME_PRE_VERIFICATION_FALLBACK].project(state).earlier_verified is False
    state = _state()
    post = nodes[N.NODE_NAME_POST_VERIFICATION_FALLBACK].project(state)
    assert state.verified_before_retry is not None and post.material is state.verified_before_retry.allowed_material
    assert post.record.reason_code == "COMPOSER_FAILED" and post.record.composer_refusal == ("composer.citation",)


def test_a_projection_holds_no_prompt_reasoning_or_tool_output() -> None:
    """R-S-2, R-S-4: no field of any projection carries prompt text, reasoning or complete tool output."""
    forbidden = {"prompt", "prompt_text", "reasoning", "raw_text", "tool_output", "invocations", "state", "outputs"}
    for kind, _ in PROJECTIONS.values():
        assert not {f.name for f in dataclasses.fields(kind)} & forbidden, kind.__name__


async def test_the_planner_and_executor_payloads_hold_exactly_their_keys(repository: Repository) -> None:
    """R-S-2: what the Planner and the Executor receive is their projection (and the tools), nothing more."""
    provider = fakes.pipeline()
    await Orchestrator(store=repository, provider=provider, tools_for=lambda _: fakes.tools()).run(
        question="why is checkout failing?", scenario="checkout-oom"
    )
    planner: AgentRequest = provider.seen["planner"][0]
    executor: AgentRequest = provider.seen["executor"][0]
    tools: list[Any] = [{"name": "k8s.events", "description": "events", "input_schema": {"type": "object"}}]
    assert json.loads(planner.input_bytes) == {
        "question": "why is checkout failing?",
        "scenario": "checkout-oom",
        "cycle": 1,
        "mode": "FULL",
        "tools": tools,
        "context": {"services": ["checkout-api"]},
    }
    assert json.loads(executor.input_bytes) == {
        "question": "why is checkout failing?",
        "scenario": "checkout-oom",
        "cycle": 1,
        "mode": "FULL",
        "plan": {"steps": [{"tool_name": "k8s.events", "arguments": {}, "purpose": "restarts"}]},
        "tools": tools,
    }
