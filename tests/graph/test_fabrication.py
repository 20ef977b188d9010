"""A fabricated key entity, error code or conclusion is REJECT material, whichever Verifier ran (R-V-4, R-V-5).

The claim "checkout-api fails with error code E4291 from the payment vault" is bound to evidence that holds
``checkout-api`` and nothing of ``E4291``: some of its facts are found, one is not. With the built-in
(heuristic) Verifier and with a scripted Verifier that calls it observed and the run PASS, the claim ends
``contradicted``, the effective verdict REJECT, and nothing of it reaches the answer (R-A-3).
"""

from __future__ import annotations

import json

import pytest

from diagnosis.v1 import contracts_pb2
from diagnosis_server.agents.base import Agent, AgentRequest, AgentRole
from diagnosis_server.agents.heuristic import HeuristicVerifier
from diagnosis_server.graph.orchestrator import Orchestrator
from diagnosis_server.store import Repository

from . import fakes

FABRICATED = "checkout-api fails with error code E4291 from the payment vault"


def executor_claiming(statement: str) -> fakes.Behaviour:
    """An Executor that calls k8s.events and claims c1 (observed) and c2 (``statement``, bound to the service)."""

    async def run(request: AgentRequest) -> str:
        return await _claims(request, statement)

    return run


async def _claims(request: AgentRequest, statement: str) -> str:
    assert request.tools is not None
    result = await request.tools.call("k8s.events", {"service": "checkout-api"})
    inv = result.invocation_id

    def bind(path: str, text: str) -> dict[str, object]:
        return {"source_invocation_ids": [inv], "tool_name": "k8s.events", "raw_path": path, "matched_text": text}

    claims = [
        {
            "claim_id": "c1",
            "statement": "checkout-api pods are OOMKilled",
            "critical": True,
            "status": "confirmed",
            "evidence_bindings": [bind("/events/0/reason", "OOMKilled"), bind("/arguments/service", "checkout-api")],
        },
        {
            "claim_id": "c2",
            "statement": statement,
            "critical": True,
            "status": "confirmed",
            "evidence_bindings": [bind("/arguments/service", "checkout-api")],
        },
    ]
    return json.dumps({"contract": "executor_evidence_v2", "claims": claims})


class _Mixed:
    """Function agents for every role but the Verifier, which is the given agent."""

    name = "mixed"

    def __init__(self, verifier: Agent) -> None:
        self._fn = fakes.pipeline(executor=executor_claiming(FABRICATED))
        self._verifier = verifier

    def agent(self, role: AgentRole) -> Agent:
        return self._verifier if role == "verifier" else self._fn.agent(role)


@pytest.mark.parametrize("verifier", ["built-in", "scripted-pass"])
async def test_a_fabricated_error_code_rejects_whichever_verifier_ran(verifier: str, repository: Repository) -> None:
    agent = (
        HeuristicVerifier()
        if verifier == "built-in"
        else fakes.FnProvider({"verifier": fakes.verify_pass}).agent("verifier")
    )
    provider = _Mixed(agent)
    run = await Orchestrator(store=repository, provider=provider, tools_for=lambda _: fakes.tools()).run(
        question="why is checkout-api failing?", scenario=""
    )
    evaluation = run.self_evaluation.verifier_evaluation
    checks = {c.claim_id: c.classification for c in evaluation.claim_checks}
    assert checks["c2"] == contracts_pb2.CLAIM_CLASSIFICATION_CONTRADICTED
    assert checks["c1"] == contracts_pb2.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION
    assert evaluation.effective_verdict == evaluation.verdict == contracts_pb2.VERDICT_REJECT
    assert run.verdict == contracts_pb2.VERDICT_REJECT
    if verifier == "scripted-pass":
        assert evaluation.model_verdict == contracts_pb2.VERDICT_PASS
        (change,) = [c for c in evaluation.classification_changes if c.claim_id == "c2"]
        assert change.source == "guard" and change.to_classification == contracts_pb2.CLAIM_CLASSIFICATION_CONTRADICTED
        assert "E4291" in change.reason
    assert "E4291" not in run.answer_text and "payment vault" not in run.answer_text
    assert "cannot support a reliable conclusion" in run.answer_text
    assert [list(f.claim_ids) for f in run.answer.confirmed_facts] == [["c1"]]
    assert not run.answer.possible_directions and not run.answer.HasField("likely_cause")
